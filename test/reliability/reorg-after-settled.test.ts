// Scenario: a reorg of depth 3 (anvil_reorg: the last 3 blocks' transactions are gone, their nonces free
// again) right after a stream of settlements has been reported settled, on 1 s blocks. The worker watches
// settled transactions until FINALITY_DEPTH blocks deep: every transaction the reorg took must be sent
// again and mined, the history must record it, and the chain must end with exactly one fee and one
// transfer per settlement, all final.
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestStack, type TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, summarizeWarnings, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 12;
const DEPTH = 3;
const FINALITY_DEPTH = 6;
const report = new ScenarioReport(
  '10-reorg-after-settled',
  'A reorg of depth 3 after settled',
  `anvil_reorg(${DEPTH}) as soon as the last of ${COUNT} settlements (arriving 250 ms apart, 1 s blocks) is settled: the last ${DEPTH} blocks' transactions removed; FINALITY_DEPTH_84532=${FINALITY_DEPTH}`,
);
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ devnet: { blockTime: 1 }, env: { FINALITY_DEPTH_84532: String(FINALITY_DEPTH), FINALITY_POLL_MS: '500' } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  // last: it throws when a check failed, after the clean-up
  report.save();
});

it('every transaction the reorg took is mined again, once, and every settlement ends final', async () => {
  const worker = await stack.startWorker();
  const verificationIds = await verifyMany(stack, COUNT);
  const ledger = await ledgerStart(stack);
  const settlementIds: string[] = [];
  for (const id of verificationIds) {
    settlementIds.push(await startSettlement(stack, id));
    await sleep(250);
  }
  await waitAllFinal(stack, settlementIds, 60_000);
  // settled, not merely final: a failed one would leave nothing on chain for the reorg to take
  const settledBefore = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: 'settled' } });
  const head = await stack.devnet.provider.getBlockNumber();
  const taken = await stack.db.prisma.chainTransaction.count({ where: { settlementId: { in: settlementIds }, blockNumber: { gt: head - DEPTH } } });
  await stack.devnet.provider.send('anvil_reorg', [DEPTH, []]);
  const reorgedAt = Date.now();

  // until every settlement of the stream is final again (the reorged ones re-mined and FINALITY_DEPTH deep)
  let notFinal = settlementIds.length;
  for (const deadline = Date.now() + 60_000; notFinal > 0 && Date.now() < deadline; await sleep(250)) {
    notFinal = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, OR: [{ finality: null }, { finality: { not: 'final' } }] } });
  }
  const finalSeconds = (Date.now() - reorgedAt) / 1000;
  const reorgedTransactions = await stack.db.prisma.chainTransaction.count({ where: { settlementId: { in: settlementIds }, reorgCount: { gt: 0 } } });
  const reorgNotes = await stack.db.prisma.settlementTransition.count({ where: { settlementId: { in: settlementIds }, fromState: 'settled', toState: 'settled' } });
  const changed = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, finality: 'changed' } });
  const sample = (await stack.db.prisma.settlement.findFirst({ where: { id: { in: settlementIds }, reorgCount: { gt: 0 } } }))?.id;
  if (sample) report.note(`status record of a reorged settlement at the end: finality ${JSON.stringify((await stack.http.get(`/v1/settlements/${sample}`)).body.finality)}`);
  report.note(`every settlement final ${finalSeconds.toFixed(1)} s after the reorg; worker warnings and errors: ${summarizeWarnings(worker.lines)}`);

  const results = [
    report.check('settlements settled before the reorg', COUNT, settledBefore),
    report.assert('transactions in the reorged blocks', 'at least 1', taken, taken >= 1),
    report.check('transactions found gone and sent again', taken, reorgedTransactions),
    report.assert('history rows recording reorgs and re-inclusions', `at least ${2 * taken}`, reorgNotes, reorgNotes >= 2 * taken),
    report.check('settlements not final at the end', 0, notFinal),
    report.check('settlements whose outcome changed', 0, changed),
    await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger }),
  ];
  expect(results.every(Boolean)).toBe(true);
}, 150_000);
