// Scenario: a reorg of depth 3 (anvil_reorg: the last 3 blocks' transactions are gone, their nonces free
// again) right after a stream of settlements has been reported settled, on 1 s blocks. Atomic path, worker
// without the treasury key: each batch of settlements is one `settle` transaction of the treasury's
// executor (its row keyed by the batch id), so a reorg that takes it takes every settlement of the batch.
// The worker watches settled transactions until FINALITY_DEPTH blocks deep: every settle transaction the
// reorg took must be sent again and mined, once, each settlement of its batch must record the reorg and the
// re-inclusion, and the chain must end with exactly one fee and one payment per settlement, all final.
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestStack, type TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, summarizeWarnings, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 12;
const DEPTH = 3;
const FINALITY_DEPTH = 6;
// a batch formed over 300 ms: settlements arriving 250 ms apart often share one, so a reorg takes several at once
const ATOMIC = { SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '300' };
const report = new ScenarioReport(
  '10-reorg-after-settled',
  'A reorg of depth 3 after settled',
  `anvil_reorg(${DEPTH}) as soon as the last of ${COUNT} settlements (arriving 250 ms apart, 1 s blocks; atomic path, BATCH_WINDOW_MS=300, no treasury key in the worker) is settled: the last ${DEPTH} blocks' settle transactions removed; FINALITY_DEPTH_84532=${FINALITY_DEPTH}`,
);
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ executor: true, devnet: { blockTime: 1 }, env: { FINALITY_DEPTH_84532: String(FINALITY_DEPTH), FINALITY_POLL_MS: '500' } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  // last: it throws when a check failed, after the clean-up
  report.save();
});

it('every settle transaction the reorg took is mined again, once, and every settlement ends final', async () => {
  const worker = await stack.startWorker(ATOMIC, { treasuryKey: false });
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
  const items = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: { in: settlementIds } }, select: { batchId: true } });
  const batchIds = [...new Set(items.map((i) => i.batchId))];
  const mined = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: { in: batchIds }, purpose: 'settle' }, select: { settlementId: true, blockNumber: true, blockHash: true } });
  await stack.devnet.provider.send('anvil_reorg', [DEPTH, []]);
  const reorgedAt = Date.now();
  // what the reorg took: the settle transactions whose block is no longer the chain's at its height (read
  // from the blocks, not from the head before the reorg, which a block mined meanwhile would make wrong)
  const replaced = await Promise.all(mined.map(async (t) => t.blockNumber !== null && (await stack.devnet.provider.getBlock(Number(t.blockNumber)))?.hash !== t.blockHash));
  const takenBatches = new Set(mined.filter((_, i) => replaced[i]).map((t) => t.settlementId));
  const taken = takenBatches.size;
  const takenSettlements = items.filter((i) => takenBatches.has(i.batchId)).length;

  // until every settlement of the stream is final again (the reorged ones re-mined and FINALITY_DEPTH deep)
  let notFinal = settlementIds.length;
  for (const deadline = Date.now() + 60_000; notFinal > 0 && Date.now() < deadline; await sleep(250)) {
    notFinal = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, OR: [{ finality: null }, { finality: { not: 'final' } }] } });
  }
  const finalSeconds = (Date.now() - reorgedAt) / 1000;
  const reorgedTransactions = await stack.db.prisma.chainTransaction.count({ where: { settlementId: { in: batchIds }, reorgCount: { gt: 0 } } });
  const reorgNotes = await stack.db.prisma.settlementTransition.count({ where: { settlementId: { in: settlementIds }, fromState: 'settled', toState: 'settled' } });
  const settlementsReorged = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, reorgCount: { gt: 0 } } });
  const changed = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, finality: 'changed' } });
  const sample = (await stack.db.prisma.settlement.findFirst({ where: { id: { in: settlementIds }, reorgCount: { gt: 0 } } }))?.id;
  if (sample) report.note(`status record of a reorged settlement at the end: finality ${JSON.stringify((await stack.http.get(`/v1/settlements/${sample}`)).body.finality)}`);
  report.note(`${settlementIds.length} settlements in ${batchIds.length} batches; the reorg took ${taken} settle transactions, of ${takenSettlements} settlements`);
  report.note(`every settlement final ${finalSeconds.toFixed(1)} s after the reorg; worker warnings and errors: ${summarizeWarnings(worker.lines)}`);

  const results = [
    report.check('settlements settled before the reorg', COUNT, settledBefore),
    report.assert('settle transactions in the reorged blocks', 'at least 1', taken, taken >= 1),
    report.check('settle transactions found gone and sent again', taken, reorgedTransactions),
    report.check('settlements recording a reorg (every settlement of a taken batch)', takenSettlements, settlementsReorged),
    // each settlement of a taken batch records the reorg and the re-inclusion
    report.assert('history rows recording reorgs and re-inclusions', `at least ${2 * takenSettlements} (2 per settlement of a taken batch)`, reorgNotes, reorgNotes >= 2 * takenSettlements),
    report.check('settlements not final at the end', 0, notFinal),
    report.check('settlements whose outcome changed', 0, changed),
    await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger, atomic: true }),
  ];
  expect(results.every(Boolean)).toBe(true);
}, 150_000);
