// Reorgs after `settled` on the atomic path: the settle transaction of a batch is one transaction for
// several settlements. When a reorg removes it, it is sent again once, and every settlement of the batch
// records the reorg and the re-inclusion, then becomes final.
import { setTimeout as sleep } from 'node:timers/promises';
import { transfersOnChain } from './support/chain-actions';
import { startTestStack, type TestStack } from './support/test-stack';

const DEPTH = 3;
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({
    executor: true,
    env: { SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '300', FINALITY_DEPTH_84532: String(DEPTH), FINALITY_POLL_MS: '300' },
  });
  const worker = await stack.startWorker();
  await until(async () => worker.lines.some((l) => l.includes('settlements are atomic')));
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

async function finalityOf(id: string): Promise<{ status: string; reorgs: number } | null> {
  return (await stack.http.get(`/v1/settlements/${id}`)).body.finality;
}

async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await sleep(100);
}

it('a batch removed by a reorg is mined again once; each of its settlements records it, then is final', async () => {
  const { merchant, payer, treasury } = stack.devnet.accounts;
  for (let i = 0; i < DEPTH; i++) await stack.devnet.provider.send('evm_mine', []);
  const start = (await stack.devnet.provider.getBlockNumber()) + 1;
  const verified = await Promise.all(
    [0, 1].map(async () => (await stack.http.post('/v1/verify').send((await stack.payment()).formB())).body.verification_id as string),
  );
  const settled = await Promise.all(
    verified.map((verification_id) => stack.http.post('/v1/settle').send({ verification_id, destination_address: merchant.address })),
  );
  const ids = settled.map((r) => {
    expect(r.status).toBe(200);
    return r.body.settlement_id as string;
  });
  // Form B answers pending at once: the worker settles in the background
  await until(async () => (await Promise.all(ids.map(async (id) => (await stack.http.get(`/v1/settlements/${id}`)).body.status))).every((s) => s === 'settled'));
  const items = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: { in: ids } } });
  expect(new Set(items.map((i) => i.batchId)).size).toBe(1);
  const [tx] = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: items[0].batchId } });
  expect(tx.purpose).toBe('settle');

  await stack.devnet.provider.send('anvil_reorg', [DEPTH, []]);
  expect(await stack.devnet.provider.getTransactionReceipt(tx.minedHash!)).toBeNull();
  await until(async () => (await Promise.all(ids.map(finalityOf))).every((f) => f?.reorgs === 1));
  for (const id of ids) expect(await finalityOf(id)).toMatchObject({ status: 'reorged', reorgs: 1 });
  await until(async () => (await stack.devnet.provider.getTransactionReceipt(tx.minedHash!))?.status === 1);
  for (let i = 0; i < DEPTH; i++) await stack.devnet.provider.send('evm_mine', []);
  await until(async () => (await Promise.all(ids.map(finalityOf))).every((f) => f?.status === 'final'));
  for (const id of ids) expect(await finalityOf(id)).toEqual({ status: 'final', reorgs: 1 });

  // on the chain as it is now: two fees and two payments, nothing twice
  expect(await transfersOnChain(stack.devnet, start, merchant.address, treasury.address)).toBe(2);
  expect(await transfersOnChain(stack.devnet, start, payer.address, merchant.address)).toBe(2);
}, 60_000);
