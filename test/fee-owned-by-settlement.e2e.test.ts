// A settlement owns its fee (issue 25, item 3): the API decides it once, from its FEE_AMOUNT, and stores it
// on the row; the worker charges exactly that, even when its own FEE_AMOUNT (and its executor's fee) says
// otherwise, as during a rolling change of the fee. Compiled worker, anvil with Circle's USDC, real HTTP.
import { setUpDevnetExecutor } from '@facilitator/evm-devnet';
import { balances, difference } from './support/chain-actions';
import { PRICE_UNITS, startTestStack, type TestStack } from './support/test-stack';
import { until } from './support/until';
import type { WorkerProcess } from './support/worker-process';

/** The fee the API is configured with, hence every settlement's own fee. */
const API_FEE = 7_000n;
/** The workers' FEE_AMOUNT, and the fee the treasury's executor takes with each item. */
const WORKER_FEE = 10_000n;

let stack: TestStack;
let worker: WorkerProcess | undefined;
let workerHoldsTreasuryKey = false;

/** (Re)starts the one worker, configured with the workers' fee, with or without the treasury key. */
async function useWorker(treasuryKey: boolean): Promise<void> {
  await worker?.stop();
  worker = await stack.startWorker({ FEE_AMOUNT: WORKER_FEE.toString() }, { treasuryKey });
  workerHoldsTreasuryKey = treasuryKey;
}

beforeAll(async () => {
  stack = await startTestStack({ env: { FEE_AMOUNT: API_FEE.toString(), SETTLEMENT_MODE: 'atomic' } });
  // the executor takes the workers' fee: the one a settlement created by this API must never be charged
  await setUpDevnetExecutor(stack.devnet, WORKER_FEE);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

async function startSettling(): Promise<{ id: string; answer: Promise<unknown> }> {
  const body = (await stack.payment()).formA();
  const verified = await stack.http.post('/v1/verify').send(body);
  expect(verified.status).toBe(200);
  const verificationId = verified.body.details.verification_id as string;
  // a supertest request is sent when awaited: `then` sends it now, its answer is awaited later
  const answer = stack.http.post('/v1/settle').send(body).then((r) => r);
  let id = '';
  await until('the settlement row', async () => {
    id = (await stack.db.prisma.settlement.findFirst({ where: { verificationId } }))?.id ?? '';
    return id !== '';
  });
  return { id, answer };
}

const record = async (id: string) => (await stack.http.get(`/v1/settlements/${id}`)).body as Record<string, unknown> & { status: string };

const explainWorker = async () => `the worker said:\n${worker?.lines.slice(-6).join('\n')}`;

it('a keyless worker whose executor takes another fee never batches the settlement: it waits, nothing charged', async () => {
  await useWorker(false);
  const before = await balances(stack.devnet);
  const { id, answer } = await startSettling();
  const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id } });
  expect(row.feeAmount).toBe(API_FEE.toString());

  await until(
    'the settlement to wait for a worker that can charge its fee',
    async () => (await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id } })).waitingReason === 'fee_differs_from_executor',
    30_000,
    explainWorker,
  );
  expect(await record(id)).toMatchObject({
    status: 'pending',
    details: { fee_amount: API_FEE.toString(), fee_collection_status: 'pending' },
    waiting: { reason: 'fee_differs_from_executor', details: { fee_amount: API_FEE.toString(), executor_fee: WORKER_FEE.toString() } },
  });
  expect(await stack.db.prisma.settlementBatchItem.count({ where: { settlementId: id } })).toBe(0);
  expect(difference(await balances(stack.devnet), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });

  // the operator gives a worker the treasury key (the explicit opt-in to the sequential path): it charges the
  // settlement's own fee, the one reported, not its FEE_AMOUNT
  await useWorker(true);
  await until('the settlement to end', async () => (await record(id)).status !== 'pending', 45_000, explainWorker);
  // the settle request waited past its hold: 202 with the pending record (the outcome is read above)
  expect([200, 202]).toContain(((await answer) as { status: number }).status);
  const settled = await record(id);
  expect(settled).toMatchObject({ status: 'settled', details: { fee_amount: API_FEE.toString(), fee_collection_status: 'collected' }, waiting: null });
  const done = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id } });
  expect(done.settlementMode).toBe('sequential');
  expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE_UNITS, merchant: PRICE_UNITS - API_FEE, treasury: API_FEE });
}, 120_000);

it('a worker holding the treasury key settles the next one sequentially at once, charged the fee reported', async () => {
  // on its own too (the test before may have stopped early)
  if (!workerHoldsTreasuryKey) await useWorker(true);
  const before = await balances(stack.devnet);
  const { id, answer } = await startSettling();
  await until('the settlement to end', async () => (await record(id)).status !== 'pending', 45_000, explainWorker);
  expect(await record(id)).toMatchObject({ status: 'settled', details: { fee_amount: API_FEE.toString(), fee_collection_status: 'collected' } });
  // the settle answer (Form A, settled within its wait on automine) reports the same fee
  expect(await answer).toMatchObject({ status: 200, body: { success: true, details: { fee_amount_wei: Number(API_FEE), fee_collection_status: 'collected' } } });
  const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id } });
  expect(row).toMatchObject({ settlementMode: 'sequential', waitingReason: null });
  expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE_UNITS, merchant: PRICE_UNITS - API_FEE, treasury: API_FEE });
}, 60_000);
