// Scenario: the network has two JSON-RPC endpoints and the first is dead for the whole run: it accepts
// every connection and resets it at once, as a load balancer with no healthy node behind it does (a TCP
// proxy with no target, so its connection attempts can be counted). The second is anvil itself (1 s
// blocks). 20 payments arrive, each verified and settled through the compiled API; every settlement must
// end settled with one fee and one transfer, /readyz must stay 200 and name endpoint 1 as down, and
// neither process may keep knocking on the dead endpoint for every call (health scoring, probes backing off).
//
// The API runs compiled, as its own process (see rpc-outage.test.ts for why); the API and the worker each
// have their own dead endpoint, so each one's attempts on it are counted apart.
import { setTimeout as sleep } from 'node:timers/promises';
import supertest from 'supertest';
import { forwardTo, recordAnswers, statusHistogram, type AnswerRecorder } from '../support/answer-recorder';
import { apiLogAbout, startApiProcess, type ApiProcess } from '../support/api-process';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { startTestStack, TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, summarizeWarnings, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 20;
const ARRIVAL_MS = 300;
const READYZ_EVERY_MS = 500;
// a provider key in the dead endpoint's URL: no answer may ever show it
const SECRET_PATH = 'v2/sk-provider-key-0123456789';
/** connection attempts a process may make on the dead endpoint besides /readyz's own checks: its first calls, then probes 1, 2, 4, … 30 s apart */
const MAX_ATTEMPTS = 25;
const report = new ScenarioReport(
  '6-rpc-first-endpoint-dead',
  'First RPC endpoint dead for the whole run',
  `RPC_URL_84532 of the API and the worker lists a dead endpoint first (every connection accepted and reset at once) and anvil second (1 s blocks); ${COUNT} payments arrive ${ARRIVAL_MS} ms apart, each verified and settled`,
);
let stack: TestStack;
let api: ApiProcess;
let recorder: AnswerRecorder;
let apiDead: TcpProxy;
let workerDead: TcpProxy;

beforeAll(async () => {
  // no target: every connection is reset as soon as it is accepted
  [apiDead, workerDead] = await Promise.all([startTcpProxy(), startTcpProxy()]);
  stack = await startTestStack({ executor: true, devnet: { blockTime: 1 } });
  api = await startApiProcess({ ...stack.env, RPC_URL_84532: `${apiDead.url}/${SECRET_PATH},${stack.devnet.rpcUrl}`, API_PROCESSES: '1', LOG_LEVEL: 'warn' });
  recorder = recordAnswers(forwardTo(api.url));
}, 60_000);
afterAll(async () => {
  await api?.stop();
  await stack?.stop();
  await Promise.all([apiDead?.stop(), workerDead?.stop()]);
  // last: it throws when a check failed, after the clean-up
  report.save();
});

/** Verifies a new payment; a 503 is retried (and stays on the record), anything else is a failure. */
async function verifyNew(observed: TestStack): Promise<string> {
  const body = (await stack.payment()).formB();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await observed.http.post('/v1/verify').send(body);
    if (res.status === 200) return res.body.verification_id;
    if (res.status !== 503 || Date.now() > deadline) throw new Error(`verify answered ${res.status}: ${JSON.stringify(res.body)}`);
    await sleep(250);
  }
}


function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
}

it('every payment settles through the second endpoint; /readyz stays 200 and names endpoint 1 as down', async () => {
  const observed: TestStack = { ...stack, http: supertest(recorder.listener) };
  const worker = await stack.startWorker({ RPC_URL_84532: `${workerDead.url}/${SECRET_PATH},${stack.devnet.rpcUrl}` });

  // /readyz sampled all along: each sample also asks endpoint 1 (one connection attempt)
  const readyz: Array<{ status: number; rpc: string; parts: string }> = [];
  let sampling = true;
  const sample = async () => {
    // Redis' connection may take a moment after start-up: from the first 200 on, every sample must be 200
    for (let i = 0; i < 100 && (await observed.http.get('/readyz')).status !== 200; i++) await sleep(100);
    while (sampling) {
      const res = await observed.http.get('/readyz');
      readyz.push({ status: res.status, rpc: String(res.body?.checks?.['rpc:eip155:84532']), parts: JSON.stringify(res.body?.parts?.['rpc:eip155:84532'] ?? null) });
      await sleep(READYZ_EVERY_MS);
    }
  };
  let sampler: Promise<void> | undefined;

  const ledger = await ledgerStart(stack);
  const verificationIds: string[] = [];
  const settlementIds: string[] = [];
  const started = Date.now();
  for (let i = 0; i < COUNT; i++) {
    // arrivals on a schedule, not back to back: reads, sends and probes interleave as in production
    await sleep(Math.max(0, started + i * ARRIVAL_MS - Date.now()));
    const verificationId = await verifyNew(observed);
    // sampling starts after the first verify, so the verify path (not a /readyz check) finds endpoint 1 dead
    sampler ??= sample();
    verificationIds.push(verificationId);
    settlementIds.push(await startSettlement(observed, verificationId));
  }
  const open = await waitAllFinal(stack, settlementIds, 60_000);
  const allFinalSeconds = (Date.now() - started) / 1000;
  sampling = false;
  await sampler;

  const metrics = (await observed.http.get('/metrics')).text;
  const parked = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, attentionAt: { not: null } } });
  const answers = recorder.answers.filter((a) => a.path === '/v1/verify' || a.path === '/v1/settle');
  const verifyMs = answers.filter((a) => a.path === '/v1/verify' && a.status === 200).map((a) => a.at - a.startedAt);
  const apiAttempts = apiDead.stats().accepted;
  // warm-up and samples: each /readyz check tries endpoint 1 once
  const readyzChecks = recorder.answers.filter((a) => a.path === '/readyz').length;
  const workerAttempts = workerDead.stats().accepted;
  const readyzHist = new Map<string, number>();
  for (const r of readyz) readyzHist.set(`${r.status} rpc ${r.rpc} parts ${r.parts}`, (readyzHist.get(`${r.status} rpc ${r.rpc} parts ${r.parts}`) ?? 0) + 1);

  report.note(`verify and settle answers: ${statusHistogram(answers)}; verify answered in ${Math.min(...verifyMs)}–${Math.max(...verifyMs)} ms, median ${median(verifyMs)} ms (through the test's forwarder)`);
  report.note(`/readyz samples (every ${READYZ_EVERY_MS} ms): ${[...readyzHist].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  report.note(`connections to the dead endpoint: API ${apiAttempts} (its ${readyzChecks} /readyz checks try it once each), worker ${workerAttempts}; every settlement final ${allFinalSeconds.toFixed(1)} s after the first payment arrived`);
  report.note(`worker warnings and errors: ${summarizeWarnings(worker.lines)}`);
  for (const a of answers.filter((x) => x.status !== 200).slice(0, 5)) {
    report.note(`unexpected answer: ${a.method} ${a.path} ${a.status} ${JSON.stringify(a.body).slice(0, 300)}; the API logged: ${apiLogAbout(api, a.requestId)}`);
  }

  // every check is recorded before any is asserted, so a failing scenario still has its full record (ledger included)
  const failedChecks: string[] = [];
  const check = (what: string, expected: unknown, observedValue: unknown) => void (report.check(what, expected, observedValue) || failedChecks.push(`${what}: expected ${expected}, observed ${observedValue}`));
  const assert = (what: string, expected: string, observedValue: unknown, ok: boolean) => void (report.assert(what, expected, observedValue, ok) || failedChecks.push(`${what}: expected ${expected}, observed ${observedValue}`));
  check('verify and settle answers other than 200', 0, answers.filter((a) => a.status !== 200).length);
  assert('median verify answer', 'within 250 ms (no wait on the dead endpoint)', `${median(verifyMs)} ms`, median(verifyMs) <= 250);
  assert('/readyz samples taken during the run', 'at least 5', readyz.length, readyz.length >= 5);
  check('/readyz samples answered 200', readyz.length, readyz.filter((r) => r.status === 200).length);
  check('/readyz samples naming endpoint 1 down and endpoint 2 ok', readyz.length, readyz.filter((r) => r.parts === JSON.stringify({ '1': 'down', '2': 'ok' })).length);
  const leaking = [...recorder.answers.map((a) => JSON.stringify(a.body)), metrics].filter((text) => text.includes(SECRET_PATH) || text.includes(`:${apiDead.port}`));
  check('answers (and /metrics) revealing the dead endpoint (URL path or port)', 0, leaking.length);
  check('/metrics: endpoint 1 down, endpoint 2 up', true, /x402_rpc_endpoint_up\{[^}]*endpoint="1"[^}]*\} 0/.test(metrics) && /x402_rpc_endpoint_up\{[^}]*endpoint="2"[^}]*\} 1/.test(metrics));
  const apiOwnAttempts = apiAttempts - readyzChecks;
  assert('API connections to the dead endpoint besides its /readyz checks', `1 to ${MAX_ATTEMPTS}`, apiOwnAttempts, apiOwnAttempts >= 1 && apiOwnAttempts <= MAX_ATTEMPTS);
  assert('worker connections to the dead endpoint', `1 to ${MAX_ATTEMPTS}`, workerAttempts, workerAttempts >= 1 && workerAttempts <= MAX_ATTEMPTS);
  check('settlements still open at the end', 0, open);
  check('settlements parked for an operator', 0, parked);
  check('API and worker processes still running (neither restarted)', true, api.alive() && worker.child.exitCode === null && worker.child.signalCode === null);
  if (!(await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger }))) failedChecks.push('ledger checks (see the scenario record)');
  expect(failedChecks).toEqual([]);
}, 150_000);
