// Scenario: one of two relayers falls under RELAYER_MIN_BALANCE_84532 in the middle of a run (its balance
// set to one wei below the minimum: what a relayer paying for settle transactions reaches first), while
// settlements arrive on 1 s blocks. Atomic path, worker without the treasury key: the relayers send the
// executor's batches (one `settle` transaction each, its row keyed by the batch id). The drained relayer
// must be skipped from then on (the other sends every batch), its alert metric must rise, and every
// settlement must end settled, in exactly one batch, with one fee and one payment each on chain.
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../support/ports';
import { valueOf } from '../support/prometheus-text';
import { startTestStack, type TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, summarizeWarnings, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 20;
const DRAIN_AFTER = 6;
const MINIMUM = 10n ** 16n;
// BATCH_WINDOW_MS 0 (the default): settlements 400 ms apart go out in batches of their own, so the relayers
// take turns many times before and after the drain
const ATOMIC = { SETTLEMENT_MODE: 'atomic' };
const report = new ScenarioReport(
  '9-relayer-drained',
  'A relayer drained mid-run',
  `relayer 1 of 2 set to one wei under RELAYER_MIN_BALANCE (0.01 ETH) after ${DRAIN_AFTER} of ${COUNT} settlements have arrived (400 ms apart, 1 s blocks; atomic path, relayers send the executor's batches, no treasury key in the worker)`,
);
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ executor: true, devnet: { blockTime: 1 }, env: { RELAYER_MIN_BALANCE_84532: MINIMUM.toString() } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  // last: it throws when a check failed, after the clean-up
  report.save();
});

it('the drained relayer is skipped and reported, the other sends every batch, and every settlement settles once', async () => {
  const metricsPort = await freePort();
  const worker = await stack.startWorker({ ...ATOMIC, WORKER_METRICS_PORT: String(metricsPort) }, { treasuryKey: false });
  const [drained, other] = stack.devnet.accounts.relayers.map((r) => r.address.toLowerCase());
  const verificationIds = await verifyMany(stack, COUNT);
  const ledger = await ledgerStart(stack);

  const settlementIds: string[] = [];
  let drainedAt = 0;
  for (let i = 0; i < COUNT; i++) {
    if (i === DRAIN_AFTER) {
      await stack.devnet.setEthBalance(drained, MINIMUM - 1n);
      drainedAt = Date.now();
    }
    settlementIds.push(await startSettlement(stack, verificationIds[i]));
    await sleep(400);
  }
  const open = await waitAllFinal(stack, settlementIds, 60_000);
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();

  // the settle transactions of these settlements' batches (keyed by batch id); the late ones were stored
  // after the worker's balance reading had caught up with the drain (a reading is at most 1 s old)
  const items = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: { in: settlementIds } }, select: { batchId: true } });
  const batchIds = [...new Set(items.map((i) => i.batchId))];
  const settles = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: { in: batchIds }, purpose: 'settle' }, orderBy: { createdAt: 'asc' } });
  const late = settles.filter((t) => t.createdAt.getTime() > drainedAt + 1_500);
  const early = settles.filter((t) => t.createdAt.getTime() < drainedAt);
  report.note(`${settlementIds.length} settlements in ${batchIds.length} batches; settle transactions before the drain: ${early.filter((t) => t.fromAddress === drained).length} from relayer 1, ${early.filter((t) => t.fromAddress === other).length} from relayer 2; worker warnings and errors: ${summarizeWarnings(worker.lines)}`);

  const results = [
    report.assert('settle transactions before the drain shared by both relayers', 'both used', early.map((t) => t.fromAddress).join(' '), early.some((t) => t.fromAddress === drained) && early.some((t) => t.fromAddress === other)),
    report.assert('settle transactions more than 1.5 s after the drain', 'at least 5, none from relayer 1', `${late.length}, ${late.filter((t) => t.fromAddress === drained).length} from relayer 1`, late.length >= 5 && late.every((t) => t.fromAddress === other)),
    report.check('x402_relayer_dry of relayer 1', 1, valueOf(metrics, 'x402_relayer_dry', { address: drained })),
    report.check('x402_relayer_dry of relayer 2', 0, valueOf(metrics, 'x402_relayer_dry', { address: other })),
    report.check('settlements still open at the end', 0, open),
    report.check('settlements parked for an operator', 0, await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, attentionAt: { not: null } } })),
    await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger, atomic: true }),
  ];
  expect(results.every(Boolean)).toBe(true);
}, 150_000);
