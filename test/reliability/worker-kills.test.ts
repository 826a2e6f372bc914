// Scenario: the worker is SIGKILLed again and again while a stream of settlements runs on a chain with
// 1 s blocks, so kills land between fees and transfers.
//
// This scenario stays on the sequential path on purpose: it is the sequential path's kill scenario (a kill
// between a settlement's fee transaction and its transfer exists only there); batch-kills.test.ts is the
// atomic path's. The sequential path sends each fee from the treasury, so its worker holds the treasury key,
// by explicit opt-in (treasuryKey: true), with SETTLEMENT_MODE=sequential set explicitly.
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestStack, TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 30;
const SEQUENTIAL = { SETTLEMENT_MODE: 'sequential' };
const report = new ScenarioReport('1-worker-kills', 'Worker SIGKILLed repeatedly during a stream of settlements', '4 SIGKILLs of the worker, about 1.5 s apart, while 30 settlements arrive at 5 per second (1 s blocks; sequential path, worker with the treasury key)');
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ devnet: { blockTime: 1, payerBalance: 10n ** 9n } });
});
afterAll(async () => {
  await stack?.stop();
  // last: it throws when a check failed, after the clean-up
  report.save();
});

it('every settlement ends settled, with no fee or transfer twice', async () => {
  const verificationIds = await verifyMany(stack, COUNT);
  const ledger = await ledgerStart(stack);
  let worker = await stack.startWorker(SEQUENTIAL, { treasuryKey: true });
  const settlementIds: string[] = [];
  const stream = (async () => {
    for (const id of verificationIds) {
      settlementIds.push(await startSettlement(stack, id));
      await sleep(200);
    }
  })();
  const interrupted: string[] = [];
  const movingMoney = () => stack.db.prisma.settlement.count({ where: { state: { in: ['collect_fee', 'fee_collected', 'executing'] } } });
  for (let kill = 0; kill < 4; kill++) {
    // about 1.5 s apart, but always at a moment when money is moving (a slow machine must not dodge it)
    await sleep(1_000 + Math.floor(Math.random() * 1_000));
    for (let wait = 0; wait < 100 && (await movingMoney()) === 0; wait++) await sleep(50);
    const moving = await movingMoney();
    interrupted.push(String(moving));
    worker.child.kill('SIGKILL');
    await worker.exited;
    worker = await stack.startWorker(SEQUENTIAL, { treasuryKey: true });
  }
  await stream;
  const open = await waitAllFinal(stack, settlementIds, 120_000);
  report.note(`settlements between their fee and their transfer (or about to be) at each kill: ${interrupted.join(', ')}`);
  expect(report.check('settlements still open at the end', 0, open)).toBe(true);
  expect(report.assert('kills that interrupted money movement', 'at least 1', interrupted.filter((n) => n !== '0').length, interrupted.some((n) => n !== '0'))).toBe(true);
  expect(await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger, atomic: false })).toBe(true);
}, 240_000);
