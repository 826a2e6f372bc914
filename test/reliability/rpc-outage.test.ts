// Scenario: the chain's JSON-RPC endpoint, as the API and the worker see it (a TCP proxy in front of
// anvil), goes away for 30 s while settlements are mid-way: new connections refused, open ones reset.
// Settlements must wait and resume; verifies, which need the chain, must answer a clear 503. The test's
// own provider (balances, logs) talks to anvil directly, and anvil keeps mining (1 s blocks) throughout.
//
// The API runs compiled, as its own process (as production does, like the worker): inside jest, errors
// made by Node itself (ECONNREFUSED from a socket) come from another realm and fail `instanceof Error`,
// so the in-process API would answer differently from production.
import { setTimeout as sleep } from 'node:timers/promises';
import supertest from 'supertest';
import type { SettlementState } from '@facilitator/db';
import { forwardTo, isEnvelope, leaksInternals, recordAnswers, statusHistogram, type AnswerRecorder } from '../support/answer-recorder';
import { apiLogAbout, startApiProcess, type ApiProcess } from '../support/api-process';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { startTestStack, TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, summarizeWarnings, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 20;
const AFTER = 3;
const OUTAGE_MS = 30_000;
const MOVING: SettlementState[] = ['collect_fee', 'fee_collected', 'executing'];
const report = new ScenarioReport(
  '4-rpc-outage',
  'RPC endpoint down for 30 s',
  `the JSON-RPC endpoint of the API and worker (a TCP proxy in front of anvil) closed for ${OUTAGE_MS / 1000} s — new connections refused, open ones reset — while ${COUNT} settlements run (1 s blocks); new payments verified during the outage, and ${AFTER} more verified and settled after it`,
);
let proxy: TcpProxy;
let stack: TestStack;
let api: ApiProcess;
let recorder: AnswerRecorder;

beforeAll(async () => {
  proxy = await startTcpProxy();
  stack = await startTestStack({ executor: true, devnet: { blockTime: 1 }, env: { RPC_URL_84532: proxy.url } });
  proxy.setTarget(stack.devnet.port);
  api = await startApiProcess({ ...stack.env, API_PROCESSES: '1', LOG_LEVEL: 'warn' });
  recorder = recordAnswers(forwardTo(api.url));
}, 60_000);
afterAll(async () => {
  await api?.stop();
  await stack?.stop();
  await proxy?.stop();
  // last: it throws when a check failed, after the clean-up
  report.save();
});


async function statesOf(ids: string[]): Promise<string> {
  const rows = await stack.db.prisma.settlement.groupBy({ by: ['state'], where: { id: { in: ids } }, _count: true });
  return rows.map((r) => `${r.state} ${r._count}`).join(', ') || 'none';
}

it('settlements wait out the outage and resume; verifies answer 503 service_unavailable meanwhile', async () => {
  const observed: TestStack = { ...stack, http: supertest(recorder.listener) };
  const worker = await stack.startWorker();
  // the first verify also reads (and caches) the token's EIP-712 domain, through the proxy
  const verificationIds = await verifyMany(observed, COUNT);
  const ledger = await ledgerStart(stack);
  const settlementIds: string[] = [];
  const stream = (async () => {
    for (const id of verificationIds) {
      settlementIds.push(await startSettlement(observed, id));
      await sleep(150);
    }
  })();

  // cut while money is moving: at least one settlement between its fee and its transfer (or sending one)
  await sleep(1_500);
  const waitUntil = Date.now() + 10_000;
  let moving = 0;
  while (Date.now() < waitUntil) {
    moving = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: { in: MOVING } } });
    if (moving > 0) break;
    await sleep(50);
  }
  const statesAtCut = await statesOf(settlementIds);
  const cutAt = Date.now();
  await proxy.close();
  const { reset } = proxy.stats();

  // during the outage: a new payment's verify every second, and readiness
  const outageVerifies: Array<{ status: number; ms: number; body: unknown }> = [];
  const readiness = new Map<string, number>();
  while (Date.now() - cutAt < OUTAGE_MS - 1_000) {
    const body = (await stack.payment()).formB();
    const t = Date.now();
    const res = await observed.http.post('/v1/verify').send(body);
    outageVerifies.push({ status: res.status, ms: Date.now() - t, body: res.body });
    const ready = await observed.http.get('/readyz');
    const rpc = String(ready.body?.checks?.['rpc:eip155:84532'] ?? '').split(':')[0];
    const key = `${ready.status} (rpc ${rpc || '?'})`;
    readiness.set(key, (readiness.get(key) ?? 0) + 1);
    await sleep(1_000 - Math.min(1_000, Date.now() - t));
  }
  await stream;
  const settlesDuringOutage = recorder.answers.filter((a) => a.path === '/v1/settle' && a.startedAt >= cutAt);
  const failedDuringOutage = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: 'failed' } });
  const statesBeforeReopen = await statesOf(settlementIds);
  const workerWarnings = summarizeWarnings(worker.lines);
  await sleep(Math.max(0, OUTAGE_MS - (Date.now() - cutAt)));
  await proxy.open();
  const reopenAt = Date.now();

  // after: new payments verify again (the same signed payment retried after a 503) and are settled
  let firstOkAt: number | undefined;
  for (let i = 0; i < AFTER; i++) {
    const body = (await stack.payment()).formB();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await observed.http.post('/v1/verify').send(body);
      if (res.status === 200) {
        firstOkAt ??= Date.now();
        verificationIds.push(res.body.verification_id);
        settlementIds.push(await startSettlement(observed, res.body.verification_id));
        break;
      }
      if (res.status !== 503 || Date.now() > deadline) throw new Error(`verify after the outage answered ${res.status}: ${JSON.stringify(res.body)}`);
      await sleep(250);
    }
  }
  const open = await waitAllFinal(stack, settlementIds, 150_000);
  const allFinalSeconds = (Date.now() - reopenAt) / 1000;
  const ready = await observed.http.get('/readyz');

  const answers = recorder.answers.filter((a) => a.path === '/v1/verify' || a.path === '/v1/settle');
  const unavailable = answers.filter((a) => a.status === 503);
  const outage503 = outageVerifies.filter((v) => v.status === 503);
  const slowest = Math.max(0, ...outageVerifies.map((v) => v.ms));
  const recoverySeconds = firstOkAt === undefined ? Number.POSITIVE_INFINITY : (firstOkAt - reopenAt) / 1000;

  report.note(`settlement states when the RPC was cut (${moving} moving money): ${statesAtCut}; connections reset by the cut: ${reset}`);
  report.note(`settlement states just before it came back: ${statesBeforeReopen}; worker warnings and errors so far: ${workerWarnings}`);
  report.note(`verifies during the outage: ${statusHistogram(outageVerifies)}, answered in ${Math.min(...outageVerifies.map((v) => v.ms))}–${slowest} ms; /readyz during the outage: ${[...readiness].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  report.note(`a verify's 503: ${JSON.stringify(outage503[0]?.body ?? null).slice(0, 400)}`);
  report.note(`settle requests during the outage (Form B needs no chain): ${statusHistogram(settlesDuringOutage)}`);
  report.note(`first verify answered 200 ${recoverySeconds.toFixed(2)} s after the endpoint came back; every settlement final ${allFinalSeconds.toFixed(1)} s after it came back (the worker's retry backoff reaches 30 s)`);
  for (const a of answers.filter((x) => x.status !== 200 && x.status !== 503).slice(0, 5)) {
    report.note(`unexpected answer: ${a.method} ${a.path} ${a.status} ${JSON.stringify(a.body).slice(0, 300)}; the API logged: ${apiLogAbout(api, a.requestId)}`);
  }

  // every check is recorded before any is asserted, so a failing scenario still has its full record (ledger included)
  const failedChecks: string[] = [];
  const check = (what: string, expected: unknown, observed: unknown) => void (report.check(what, expected, observed) || failedChecks.push(`${what}: expected ${expected}, observed ${observed}`));
  const assert = (what: string, expected: string, observed: unknown, ok: boolean) => void (report.assert(what, expected, observed, ok) || failedChecks.push(`${what}: expected ${expected}, observed ${observed}`));
  assert('settlements moving money when the RPC was cut', 'at least 1', moving, moving > 0);
  check('verifies of new payments during the outage answered 503', outageVerifies.length, outage503.length);
  check('503 answers in the envelope with code service_unavailable', unavailable.length, unavailable.filter((a) => isEnvelope(a.body, 'service_unavailable')).length);
  check('5xx answers other than 503', 0, answers.filter((a) => a.status >= 500 && a.status !== 503).length);
  check('answers other than 200 or 503', 0, answers.filter((a) => a.status !== 200 && a.status !== 503).length);
  check('error answers exposing internals (stack trace, driver text)', 0, answers.filter((a) => a.status !== 200 && leaksInternals(a.body)).length);
  const revealing = answers.filter((a) => a.status !== 200 && [proxy.url, `:${proxy.port}`, `:${stack.devnet.port}`].some((s) => JSON.stringify(a.body).includes(s)));
  check('error answers revealing the RPC endpoint (URL or port)', 0, revealing.length);
  assert('slowest verify answer during the outage', 'within 5 s', `${slowest} ms`, slowest <= 5_000);
  check('settlements failed during the outage', 0, failedDuringOutage);
  assert('first verify answered 200 after the endpoint came back', 'within 5 s', `${recoverySeconds.toFixed(2)} s`, recoverySeconds <= 5);
  check('API ready again (/readyz)', 200, ready.status);
  check('API and worker processes still running (neither restarted)', true, api.alive() && worker.child.exitCode === null && worker.child.signalCode === null);
  check('settlements still open at the end', 0, open);
  if (!(await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger }))) failedChecks.push('ledger checks (see the scenario record)');
  expect(failedChecks).toEqual([]);
}, 300_000);
