// Custody (issue 24): the worker settles on the atomic path holding relayer keys only; no key in its
// environment can move a merchant's allowance. Compiled worker, anvil with Circle's USDC, real HTTP.
import { setTimeout as sleep } from 'node:timers/promises';
import { setUpDevnetExecutor } from '@facilitator/evm-devnet';
import { balances, difference } from './support/chain-actions';
import { PRICE_UNITS, startTestStack, workerEnvWithoutTreasuryKey, type TestStack } from './support/test-stack';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process';

const FEE = 10_000n;
let stack: TestStack;
let worker: WorkerProcess;

beforeAll(async () => {
  // the executor is NOT set up yet: the worker starts without the treasury key on a network without the atomic path
  stack = await startTestStack({ env: { SETTLEMENT_MODE: 'atomic' } });
  worker = await stack.startWorker({ EXECUTOR_RECHECK_MS: '1000' }, { treasuryKey: false });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the worker said:\n${worker.lines.slice(-8).join("\n")}`);
    await sleep(100);
  }
}

interface KeyLine {
  message: string;
  role: string;
  address: string;
  canDo: string;
}

it('says at start-up which keys it holds and what each can do: relayers only, none that can move an allowance', async () => {
  const keys = await until(
    async () => worker.lines.filter((l) => l.includes('"signing key"')).map((l) => JSON.parse(l) as KeyLine),
    (lines) => lines.length === stack.devnet.accounts.relayers.length,
    'the signing key lines',
  );
  expect(keys.map((k) => k.role)).toEqual(keys.map(() => 'relayer'));
  expect(keys.map((k) => k.address)).toEqual(stack.devnet.accounts.relayers.map((r) => r.address.toLowerCase()));
  expect(keys.every((k) => k.canDo.includes('only together with a payer-signed payment'))).toBe(true);
  expect(worker.lines.join('\n')).not.toContain(stack.devnet.accounts.treasury.privateKey.slice(2));
});

it('waits (nothing sent) while the atomic path is not set up, then settles atomically once `executor setup` ran', async () => {
  const before = await balances(stack.devnet);
  const body = (await stack.payment()).formA();
  expect((await stack.http.post('/v1/verify').send(body)).status).toBe(200);
  // a supertest request is sent when awaited: `then` sends it now, and the answer is awaited below
  const settle = stack.http.post('/v1/settle').send(body).then((r) => r);

  const id = (
    await until(
      () => stack.db.prisma.settlement.findFirst({ where: { waitingReason: { not: null } } }),
      (s) => s !== null,
      'the settlement to wait',
    )
  )!.id;
  const waiting = (await stack.http.get(`/v1/settlements/${id}`)).body;
  expect(waiting).toMatchObject({ status: 'pending', state: 'check_allowance', waiting: { reason: 'atomic_path_not_ready' } });
  expect(difference(await balances(stack.devnet), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
  expect(worker.lines.join('\n')).toContain('this worker holds no treasury key for the sequential path: settlements wait for it');

  // the operator sets up the executor (here with the devnet's treasury key, as the CLI's offline flow would)
  await setUpDevnetExecutor(stack.devnet, FEE);
  expect((await settle).status).toBeLessThan(500);
  const record = await until(() => stack.http.get(`/v1/settlements/${id}`).then((r) => r.body), (r) => r.status !== 'pending', 'the outcome');
  expect(record).toMatchObject({ status: 'settled', waiting: null });
  const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id } });
  expect(row.settlementMode).toBe('atomic');
  expect(row.feeTxHash).toBe(row.settlementTxHash);
  expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE_UNITS, merchant: PRICE_UNITS - FEE, treasury: FEE });
}, 60_000);

it('refuses to start on the sequential path without the treasury key, saying why in one line', async () => {
  const started = startWorkerProcess({ ...workerEnvWithoutTreasuryKey(stack.env), SETTLEMENT_MODE: 'sequential' });
  await expect(started).rejects.toThrow(
    'configuration error: TREASURY_PRIVATE_KEY is required with SETTLEMENT_MODE=sequential (the treasury sends each fee itself); SETTLEMENT_MODE=atomic needs no treasury key in the worker',
  );
});
