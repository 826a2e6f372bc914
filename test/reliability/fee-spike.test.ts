// Scenario: the network's base fee jumps above our cap (MAX_FEE_PER_GAS_GWEI_84532 = 2) for 20 s while
// settlements arrive on 1 s blocks. anvil_setNextBlockBaseFeePerGas is called again for every block during
// the spike, so each block of it has a 10 gwei base fee. Settlements must wait (not fail) while it lasts,
// say so on their status record, and all end settled with one fee and one transfer each once it is over.
import { parseUnits } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestStack, type TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, summarizeWarnings, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 20;
const SPIKE_MS = 20_000;
const CAP_GWEI = 2;
const SPIKE = parseUnits('10', 'gwei');
const CALM = parseUnits('0.5', 'gwei');
const report = new ScenarioReport(
  '8-fee-spike',
  'Fee spike above the cap for 20 s',
  `the base fee held at 10 gwei, above MAX_FEE_PER_GAS_GWEI=${CAP_GWEI}, for ${SPIKE_MS / 1000} s while ${COUNT} settlements arrive (1 s blocks), then back to 0.5 gwei`,
);
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ executor: true, devnet: { blockTime: 1 }, env: { MAX_FEE_PER_GAS_GWEI_84532: String(CAP_GWEI) } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  // last: it throws when a check failed, after the clean-up
  report.save();
});

it('settlements wait through the spike, then all settle once, with no double fee or transfer', async () => {
  const worker = await stack.startWorker();
  const verificationIds = await verifyMany(stack, COUNT);
  await stack.devnet.provider.send('anvil_setNextBlockBaseFeePerGas', [`0x${CALM.toString(16)}`]);
  await sleep(1_200);
  const ledger = await ledgerStart(stack);

  // the spike: every block of it gets the high base fee (anvil would otherwise lower it 12.5% per block)
  let spiking = true;
  const holdSpike = (async () => {
    while (spiking) {
      await stack.devnet.provider.send('anvil_setNextBlockBaseFeePerGas', [`0x${SPIKE.toString(16)}`]);
      await sleep(200);
    }
    await stack.devnet.provider.send('anvil_setNextBlockBaseFeePerGas', [`0x${CALM.toString(16)}`]);
  })();
  const spikeStarted = Date.now();
  // two blocks, so the latest block carries the spike before the first settlement arrives
  await sleep(2_200);

  const settlementIds: string[] = [];
  let maxWaiting = 0;
  let failedDuringSpike = 0;
  let sentDuringSpike = 0;
  for (let i = 0; i < COUNT; i++) {
    settlementIds.push(await startSettlement(stack, verificationIds[i]));
    await sleep(400);
  }
  while (Date.now() - spikeStarted < SPIKE_MS) {
    maxWaiting = Math.max(maxWaiting, await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, waitingReason: 'gas_price_above_cap' } }));
    failedDuringSpike = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: 'failed' } });
    // a settle transaction's row is keyed by its batch, not by a settlement: both kinds are counted
    const batches = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: { in: settlementIds } }, select: { batchId: true } });
    sentDuringSpike = await stack.db.prisma.chainTransaction.count({ where: { settlementId: { in: [...settlementIds, ...batches.map((b) => b.batchId)] } } });
    await sleep(500);
  }
  const sample = await stack.http.get(`/v1/settlements/${settlementIds[0]}`);
  spiking = false;
  await holdSpike;
  const spikeEnded = Date.now();

  const open = await waitAllFinal(stack, settlementIds, 60_000);
  const allFinalAfterSpikeSeconds = (Date.now() - spikeEnded) / 1000;
  const failed = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: 'failed' } });
  const stillWaiting = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, waitingReason: { not: null } } });
  report.note(`status record of a settlement during the spike: state ${sample.body.state}, waiting ${JSON.stringify(sample.body.waiting)}`);
  report.note(`every settlement final ${allFinalAfterSpikeSeconds.toFixed(1)} s after the spike ended; worker warnings and errors: ${summarizeWarnings(worker.lines)}`);

  const results = [
    report.check('settlements waiting for gas at once during the spike', COUNT, maxWaiting),
    report.check('transactions sent for them during the spike', 0, sentDuringSpike),
    report.check('settlements failed during the spike', 0, failedDuringSpike),
    report.check('status record during the spike says why it waits', 'gas_price_above_cap', sample.body.waiting?.reason),
    report.check('settlements still open at the end', 0, open),
    report.check('settlements failed', 0, failed),
    report.check('settlements still marked waiting at the end', 0, stillWaiting),
    await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger }),
  ];
  expect(results.every(Boolean)).toBe(true);
}, 150_000);
