// Scenario: the chain drops our transactions from its mempool (anvil_dropTransaction) before mining them.
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestStack, TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 5;
const report = new ScenarioReport('5-dropped-transaction', 'The chain drops a transaction', 'every fee and transfer transaction of 5 settlements removed from the mempool (anvil_dropTransaction) right after broadcast, 2 s blocks');
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ devnet: { blockTime: 2 } });
});
afterAll(async () => {
  await stack?.stop();
  // last: it throws when a check failed, after the clean-up
  report.save();
});

it('the worker notices dropped transactions and sends them again', async () => {
  await stack.startWorker();
  const verificationIds = await verifyMany(stack, COUNT);
  const ledger = await ledgerStart(stack);
  const settlementIds = await Promise.all(verificationIds.map((id) => startSettlement(stack, id)));

  // drop each transaction once, as soon as the node has it (until it is mined, keep trying)
  const dropped = new Set<string>();
  const mined = new Set<string>();
  let removed = 0;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && dropped.size + mined.size < COUNT * 2) {
    const attempts = await stack.db.prisma.chainTransactionAttempt.findMany({ where: { transaction: { settlementId: { in: settlementIds } } } });
    for (const attempt of attempts) {
      if (dropped.has(attempt.hash) || mined.has(attempt.hash)) continue;
      if ((await stack.devnet.provider.send('anvil_dropTransaction', [attempt.hash])) !== null) {
        dropped.add(attempt.hash);
        removed++;
      } else if (await stack.devnet.provider.getTransactionReceipt(attempt.hash)) {
        mined.add(attempt.hash);
      }
    }
    await sleep(10);
  }
  report.note(`${removed} transactions removed from the mempool; ${mined.size} were mined before we could`);
  const open = await waitAllFinal(stack, settlementIds, 90_000);
  expect(report.assert('transactions removed from the mempool before mining', `at least ${COUNT}`, removed, removed >= COUNT)).toBe(true);
  expect(report.check('settlements still open at the end', 0, open)).toBe(true);
  expect(await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger })).toBe(true);
}, 180_000);
