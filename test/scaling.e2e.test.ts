// Several worker processes share the work without doing any of it twice.
import { transfersOnChain } from './support/chain-actions';
import { startTestStack, TestStack } from './support/test-stack';
import { setTimeout as sleep } from 'node:timers/promises';

const COUNT = 40;
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ devnet: { blockTime: 0.5 } });
});
afterAll(async () => {
  await stack?.stop();
});

it('two worker processes with concurrency 5 each settle 40 payments, none processed twice', async () => {
  const workers = await Promise.all([1, 2].map(() => stack.startWorker({ SETTLEMENT_CONCURRENCY: '5' })));
  const { merchant, payer, treasury } = stack.devnet.accounts;
  const startBlock = await stack.devnet.provider.getBlockNumber();
  const ids: string[] = [];
  for (let i = 0; i < COUNT; i++) {
    const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
    const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: merchant.address });
    ids.push(s.body.settlement_id);
  }
  const deadline = Date.now() + 60_000;
  while ((await stack.db.prisma.settlement.count({ where: { id: { in: ids }, state: 'settled' } })) < COUNT) {
    if (Date.now() > deadline) throw new Error('not all settled');
    await sleep(200);
  }

  // each state entered exactly once per settlement: no step ran twice to completion
  const transitions = await stack.db.prisma.settlementTransition.groupBy({ by: ['settlementId', 'toState'], where: { settlementId: { in: ids } }, _count: true });
  expect(transitions).toHaveLength(COUNT * 6);
  expect(transitions.every((t) => t._count === 1)).toBe(true);
  expect(await stack.db.prisma.chainTransaction.count({ where: { settlementId: { in: ids } } })).toBe(COUNT * 2);

  expect(await transfersOnChain(stack.devnet, startBlock, merchant.address, treasury.address)).toBe(COUNT);
  expect(await transfersOnChain(stack.devnet, startBlock, payer.address, merchant.address)).toBe(COUNT);

  // both processes took part
  for (const worker of workers) {
    expect(worker.lines.some((l) => l.includes('"settlement transition"'))).toBe(true);
  }
}, 120_000);

it('SIGTERM drains within the bounded time, and a settlement it left unfinished is resumed by another worker', async () => {
  const worker = await stack.startWorker({ WORKER_SHUTDOWN_TIMEOUT_MS: '1000' });
  const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
  const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  // stop it while the settlement is on its way
  for (let i = 0; i < 100; i++) {
    const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: s.body.settlement_id } });
    if (row.state !== 'pending') break;
    await sleep(20);
  }
  const started = Date.now();
  await worker.stop('SIGTERM');
  expect(Date.now() - started).toBeLessThan(1_000 + 3_000 + 1_000);
  expect(worker.lines.some((l) => l.includes('"worker draining"'))).toBe(true);
  await stack.startWorker();
  for (let i = 0; i < 200; i++) {
    const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: s.body.settlement_id } });
    if (row.state === 'settled') return;
    await sleep(50);
  }
  throw new Error('the settlement was not resumed');
}, 60_000);
