// Scenario (issue 14): the worker is SIGKILLed while batches of atomic settlements are being stored, sent
// and mined (1 s blocks), so kills land between a batch's storing and its sending, and while it is mined.
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestStack, TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 30;
const report = new ScenarioReport(
  '11-batch-kills',
  'Worker SIGKILLed while atomic settlements are batched',
  '3 SIGKILLs of the worker while 30 settlements arrive in bursts of 10 and share executor transactions (atomic path, BATCH_WINDOW_MS=300, 1 s blocks)',
);
let stack: TestStack;
const ATOMIC = { SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '300' };

beforeAll(async () => {
  stack = await startTestStack({ executor: true, devnet: { blockTime: 1, payerBalance: 10n ** 9n } });
});
afterAll(async () => {
  await stack?.stop();
  // last: it throws when a check failed, after the clean-up
  report.save();
});

it('every settlement ends settled, each in exactly one batch, with no fee or transfer twice', async () => {
  const verificationIds = await verifyMany(stack, COUNT);
  const ledger = await ledgerStart(stack);
  let worker = await stack.startWorker(ATOMIC);
  const settlementIds: string[] = [];
  const batchedNotMined = () =>
    stack.db.prisma.$queryRaw<Array<{ n: bigint }>>`
      SELECT count(*) AS n FROM settlement_batches b
        LEFT JOIN chain_transactions t ON t.settlement_id = b.id AND t.purpose = 'settle'
       WHERE t.id IS NULL OR t.status IN ('allocated', 'signed', 'broadcast')`.then((r) => Number(r[0].n));
  const interrupted: number[] = [];
  for (let burst = 0; burst < 3; burst++) {
    settlementIds.push(...(await Promise.all(verificationIds.slice(burst * 10, burst * 10 + 10).map((id) => startSettlement(stack, id)))));
    // the kill lands while a batch of this burst is stored but not yet mined: a random moment in that window
    for (let wait = 0; wait < 200 && (await batchedNotMined()) === 0; wait++) await sleep(10);
    await sleep(Math.floor(Math.random() * 300));
    interrupted.push(await batchedNotMined());
    worker.child.kill('SIGKILL');
    await worker.exited;
    worker = await stack.startWorker(ATOMIC);
  }
  const open = await waitAllFinal(stack, settlementIds, 120_000);
  const batches = await stack.db.prisma.settlementBatch.findMany({ select: { itemCount: true } });
  report.note(`batches stored but not yet mined at each kill: ${interrupted.join(', ')}; batch sizes: ${batches.map((b) => b.itemCount).join(', ')}`);
  expect(report.check('settlements still open at the end', 0, open)).toBe(true);
  expect(report.assert('kills that landed while a batch was in flight', 'at least 1', interrupted.filter((n) => n > 0).length, interrupted.some((n) => n > 0))).toBe(true);
  expect(report.assert('batches that held more than one settlement', 'at least 1', batches.filter((b) => b.itemCount > 1).length, batches.some((b) => b.itemCount > 1))).toBe(true);
  expect(await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger, atomic: true })).toBe(true);
}, 240_000);
