// Settlements that wait for the chain instead of failing (issue 15): a base fee above the cap
// (MAX_FEE_PER_GAS_GWEI_<chainId>, raised on anvil with anvil_setNextBlockBaseFeePerGas), and relayers
// without gas (RELAYER_MIN_BALANCE_<chainId>, drained with anvil_setBalance). Each wait shows on the status
// record and in the worker's metrics, sends nothing, counts no job attempt, and the settlement goes on,
// one fee and one transfer, once the chain lets it.
import { parseUnits } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from './support/ports';
import { valueOf } from './support/prometheus-text';
import { transfersOnChain } from './support/chain-actions';
import { startTestStack, withStackQueues, type TestStack } from './support/test-stack';

const gwei = (n: string) => parseUnits(n, 'gwei');
const MIN_RELAYER_BALANCE = 10n ** 16n;
let stack: TestStack;
let scrapeWorker: () => Promise<string>;

beforeAll(async () => {
  stack = await startTestStack({ env: { MAX_FEE_PER_GAS_GWEI_84532: '2', RELAYER_MIN_BALANCE_84532: MIN_RELAYER_BALANCE.toString() } });
  const metricsPort = await freePort();
  await stack.startWorker({ WORKER_METRICS_PORT: String(metricsPort) });
  scrapeWorker = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

/** The next block's base fee, made the latest block's at once (with automine nothing else mines it). */
async function setBaseFee(wei: bigint): Promise<void> {
  await stack.devnet.provider.send('anvil_setNextBlockBaseFeePerGas', [`0x${wei.toString(16)}`]);
  await stack.devnet.provider.send('evm_mine', []);
}

/** An empty block mined now: counting transfers from it counts only what comes after. */
async function emptyBlock(): Promise<number> {
  await stack.devnet.provider.send('evm_mine', []);
  return stack.devnet.provider.getBlockNumber();
}

async function settle(): Promise<string> {
  const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
  expect(v.status).toBe(200);
  const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  expect(s.status).toBe(200);
  return s.body.settlement_id as string;
}

/** A settlement's status record, as much of it as these tests read. */
interface StatusRecord {
  status: string;
  state: string;
  waiting: { reason: string; since: string; details: Record<string, string> } | null;
}

async function statusUntil(id: string, done: (record: StatusRecord) => boolean, timeoutMs = 20_000): Promise<StatusRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = (await stack.http.get(`/v1/settlements/${id}`)).body;
    if (done(record) || Date.now() > deadline) return record;
    await sleep(100);
  }
}

async function movesSince(block: number) {
  const { merchant, payer, treasury } = stack.devnet.accounts;
  return {
    fees: await transfersOnChain(stack.devnet, block, merchant.address, treasury.address),
    payments: await transfersOnChain(stack.devnet, block, payer.address, merchant.address),
  };
}

it('a base fee above the cap makes a settlement wait, sending nothing, and it settles once the fee is back under', async () => {
  const start = await emptyBlock();
  await setBaseFee(gwei('10'));
  const id = await settle();
  const waiting = await statusUntil(id, (r) => r.waiting !== null);
  expect(waiting).toMatchObject({
    status: 'pending',
    state: 'collect_fee',
    waiting: { reason: 'gas_price_above_cap', details: { base_fee_per_gas: gwei('10').toString(), max_fee_per_gas_cap: gwei('2').toString() } },
  });
  const since = waiting.waiting?.since;
  // a few more looks, and still nothing sent; the wait keeps its start
  await sleep(4_500);
  expect((await stack.http.get(`/v1/settlements/${id}`)).body).toMatchObject({ state: 'collect_fee', waiting: { reason: 'gas_price_above_cap', since } });
  expect(await movesSince(start)).toEqual({ fees: 0, payments: 0 });
  expect(await stack.db.prisma.chainTransaction.count({ where: { settlementId: id } })).toBe(0);
  const metrics = await scrapeWorker();
  expect(valueOf(metrics, 'x402_settlements_waiting', { reason: 'gas_price_above_cap' })).toBe(1);
  expect(valueOf(metrics, 'x402_settlement_waits_total', { reason: 'gas_price_above_cap' })).toBeGreaterThanOrEqual(2);

  await setBaseFee(gwei('0.5'));
  const settled = await statusUntil(id, (r) => r.status !== 'pending');
  expect(settled).toMatchObject({ status: 'settled', state: 'settled', waiting: null });
  expect(await movesSince(start)).toEqual({ fees: 1, payments: 1 });
  // the job ran several times, and only its last, successful run counted as an attempt
  const job = await withStackQueues(stack.config, (queues) => queues.settlement.getJob(id));
  expect(job?.attemptsStarted).toBeGreaterThanOrEqual(3);
  expect(job?.attemptsMade).toBe(1);
  expect(valueOf(await scrapeWorker(), 'x402_settlements_waiting', { reason: 'gas_price_above_cap' })).toBe(0);
}, 60_000);

it('a relayer under its minimum balance is skipped and reported; with none left, settlements wait before the fee', async () => {
  const [a, b] = stack.devnet.accounts.relayers.map((r) => r.address);
  const full = await stack.devnet.provider.getBalance(b);
  await stack.devnet.setEthBalance(a, MIN_RELAYER_BALANCE - 1n);
  // past the worker's last balance reading (at most 1 s old)
  await sleep(1_500);
  const first = await settle();
  const second = await settle();
  for (const id of [first, second]) expect(await statusUntil(id, (r) => r.status !== 'pending')).toMatchObject({ status: 'settled' });
  const senders = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: { in: [first, second] }, purpose: 'transfer' } });
  expect(senders.map((t) => t.fromAddress)).toEqual([b.toLowerCase(), b.toLowerCase()]);
  expect(valueOf(await scrapeWorker(), 'x402_relayer_dry', { address: a.toLowerCase() })).toBe(1);
  expect(valueOf(await scrapeWorker(), 'x402_relayer_dry', { address: b.toLowerCase() })).toBe(0);

  const start = await emptyBlock();
  await stack.devnet.setEthBalance(b, 0n);
  await sleep(1_500);
  const stuck = await settle();
  expect(await statusUntil(stuck, (r) => r.waiting !== null)).toMatchObject({ status: 'pending', state: 'collect_fee', waiting: { reason: 'no_funded_relayer' } });
  expect(await movesSince(start)).toEqual({ fees: 0, payments: 0 });
  expect(valueOf(await scrapeWorker(), 'x402_settlements_waiting', { reason: 'no_funded_relayer' })).toBe(1);

  await stack.devnet.setEthBalance(b, full);
  expect(await statusUntil(stuck, (r) => r.status !== 'pending', 30_000)).toMatchObject({ status: 'settled', waiting: null });
  expect(await movesSince(start)).toEqual({ fees: 1, payments: 1 });
}, 90_000);
