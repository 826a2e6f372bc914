// Scenario: the network has two JSON-RPC endpoints, two TCP proxies in front of the same anvil (1 s
// blocks). Endpoint 1 flaps for the whole run: every 3 s it goes down (new connections refused, open ones
// reset, as in rpc-outage.test.ts; a cut waits up to 1 s more for money to be moving) or comes back; endpoint 2 stays up. 28 payments arrive over 21 s, each
// verified and settled through the compiled API. Atomic path, worker without the treasury key: settlements
// go out in batches, one executor `settle` transaction each. Every settlement must end settled, in exactly
// one batch, with one fee and one payment on chain, none parked for an operator, and since endpoint 2
// answers throughout, the API must answer no 5xx and /readyz must stay 200. Reads fail over between the endpoints and signed transactions go to every
// healthy one, so a transaction may reach anvil twice: the ledger check shows whether that ever cost twice.
//
// The API runs compiled, as its own process (see rpc-outage.test.ts for why). The test's own provider
// (balances, logs) talks to anvil directly.
import { setTimeout as sleep } from 'node:timers/promises';
import supertest from 'supertest';
import type { SettlementState } from '@facilitator/db';
import { forwardTo, recordAnswers, statusHistogram, type AnswerRecorder } from '../support/answer-recorder';
import { apiLogAbout, startApiProcess, type ApiProcess } from '../support/api-process';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { startTestStack, TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, summarizeWarnings, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const ARRIVAL_MS = 750;
const FLAP_MS = 3_000;
const CUTS = 3;
// payments keep arriving for (2 × CUTS + 1) flaps, 21 s: past the last asserted cut (at 15 s) and the up phase
// after it. The atomic path settles each payment within a block or two of its arrival, so the run lasts
// about as long as the arrivals do; 20 payments over 15 s ended before the third cut.
const COUNT = ((2 * CUTS + 1) * FLAP_MS) / ARRIVAL_MS;
const ATOMIC = { SETTLEMENT_MODE: 'atomic' };
const READYZ_EVERY_MS = 500;
/** an RPC call timeout: a verify this slow waited on endpoint 1 instead of failing over */
const SLOWEST_VERIFY_MS = 3_000;
const MOVING: SettlementState[] = ['collect_fee', 'fee_collected', 'executing'];
const report = new ScenarioReport(
  '7-rpc-flapping-endpoint',
  'One RPC endpoint flapping every few seconds',
  `RPC_URL_84532 of the API and the worker lists two TCP proxies in front of the same anvil (1 s blocks); the first goes down (new connections refused, open ones reset; each cut waits up to ${FLAP_MS / 3000} s more for a transaction in flight) and up again every ${FLAP_MS / 1000} s for the whole run, the second stays up; ${COUNT} payments arrive ${ARRIVAL_MS} ms apart, each verified and settled (atomic path, no treasury key in the worker)`,
);
let flapping: TcpProxy;
let steady: TcpProxy;
let stack: TestStack;
let api: ApiProcess;
let recorder: AnswerRecorder;

beforeAll(async () => {
  [flapping, steady] = await Promise.all([startTcpProxy(), startTcpProxy()]);
  stack = await startTestStack({ executor: true, devnet: { blockTime: 1 }, env: { RPC_URL_84532: `${flapping.url},${steady.url}` } });
  flapping.setTarget(stack.devnet.port);
  steady.setTarget(stack.devnet.port);
  api = await startApiProcess({ ...stack.env, API_PROCESSES: '1', LOG_LEVEL: 'warn' });
  recorder = recordAnswers(forwardTo(api.url));
}, 60_000);
afterAll(async () => {
  await api?.stop();
  await stack?.stop();
  await Promise.all([flapping?.stop(), steady?.stop()]);
  // last: it throws when a check failed, after the clean-up
  report.save();
});


it('every payment settles while endpoint 1 flaps; no 5xx while endpoint 2 answers', async () => {
  const observed: TestStack = { ...stack, http: supertest(recorder.listener) };
  const worker = await stack.startWorker(ATOMIC, { treasuryKey: false });
  const ledger = await ledgerStart(stack);
  const verificationIds: string[] = [];
  const settlementIds: string[] = [];

  // Money is moving while a settlement is between its fee and its transfer (the sequential path) or while a
  // transaction is signed or broadcast and not yet mined: on the atomic path a batch's settle transaction, its
  // settlements' states all written at once when its receipt comes, so the states alone are almost never caught.
  const movingMoney = async () => {
    const [between, inFlight] = await Promise.all([
      stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: { in: MOVING } } }),
      stack.db.prisma.chainTransaction.count({ where: { status: { in: ['signed', 'broadcast'] } } }),
    ]);
    return between + inFlight;
  };

  // endpoint 1 down and up every FLAP_MS until every settlement is final; each cut notes what it hit
  const cuts: Array<{ moving: number; reset: number; servedBefore: number }> = [];
  const toggles: Array<{ at: number; down: boolean }> = [];
  let running = true;
  const flapper = (async () => {
    let acceptedAtOpen = flapping.stats().accepted;
    while (running) {
      await sleep(FLAP_MS);
      if (!running) break;
      if (flapping.isOpen()) {
        // cut while money moves when it does within a third of a flap: the cuts would otherwise fall on the
        // arrivals' own rhythm (every 3 s is every fourth arrival), in the same lull between two settlements
        const until = Date.now() + FLAP_MS / 3;
        let moving = await movingMoney();
        while (moving === 0 && running && Date.now() < until) {
          await sleep(20);
          moving = await movingMoney();
        }
        const before = flapping.stats();
        toggles.push({ at: Date.now(), down: true });
        await flapping.close();
        cuts.push({ moving, reset: flapping.stats().reset - before.reset, servedBefore: before.accepted - acceptedAtOpen });
      } else {
        await flapping.open();
        toggles.push({ at: Date.now(), down: false });
        acceptedAtOpen = flapping.stats().accepted;
      }
    }
  })();

  // /readyz sampled all along: each sample asks both endpoints
  const readyz: Array<{ status: number; parts: string }> = [];
  const sampler = (async () => {
    // Redis' connection may take a moment after start-up: from the first 200 on, every sample must be 200
    for (let i = 0; i < 100 && (await observed.http.get('/readyz')).status !== 200; i++) await sleep(100);
    while (running) {
      const res = await observed.http.get('/readyz');
      readyz.push({ status: res.status, parts: JSON.stringify(res.body?.parts?.['rpc:eip155:84532'] ?? null) });
      await sleep(READYZ_EVERY_MS);
    }
  })();

  let verifiesWhileDown = 0;
  const started = Date.now();
  for (let i = 0; i < COUNT; i++) {
    // arrivals on a schedule, spread over several flaps
    await sleep(Math.max(0, started + i * ARRIVAL_MS - Date.now()));
    if (!flapping.isOpen()) verifiesWhileDown++;
    const body = (await stack.payment()).formB();
    // a 503 is retried (and stays on the record); anything else ends the scenario
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await observed.http.post('/v1/verify').send(body);
      if (res.status === 200) {
        verificationIds.push(res.body.verification_id);
        break;
      }
      if (res.status !== 503 || Date.now() > deadline) throw new Error(`verify answered ${res.status}: ${JSON.stringify(res.body)}`);
      await sleep(250);
    }
    settlementIds.push(await startSettlement(observed, verificationIds[verificationIds.length - 1]));
  }
  const open = await waitAllFinal(stack, settlementIds, 60_000);
  const allFinalSeconds = (Date.now() - started) / 1000;
  running = false;
  await Promise.all([flapper, sampler]);

  const parked = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, attentionAt: { not: null } } });
  const answers = recorder.answers.filter((a) => a.path === '/v1/verify' || a.path === '/v1/settle');
  const verifies = answers.filter((a) => a.path === '/v1/verify');
  const verifyMs = verifies.map((a) => a.at - a.startedAt);
  const slowest = Math.max(0, ...verifyMs);
  const slowestAt = verifies.find((a) => a.at - a.startedAt === slowest)?.startedAt ?? 0;
  const lastToggle = [...toggles].reverse().find((t) => t.at <= slowestAt);
  const readyzHist = new Map<string, number>();
  for (const r of readyz) readyzHist.set(`${r.status} parts ${r.parts}`, (readyzHist.get(`${r.status} parts ${r.parts}`) ?? 0) + 1);
  const resets = cuts.reduce((n, c) => n + c.reset, 0);
  // the cut before each later one found endpoint 1 back in use: the pool returned to it after a flap
  const servedAgain = cuts.slice(1).filter((c) => c.servedBefore > 0).length;
  const partsDown = readyz.filter((r) => JSON.parse(r.parts)?.['1'] === 'down').length;
  const partsUp = readyz.filter((r) => JSON.parse(r.parts)?.['1'] === 'ok').length;

  report.note(`cuts of endpoint 1: ${cuts.length}; settlements between fee and transfer plus transactions in flight at each: ${cuts.map((c) => c.moving).join(', ')}; open connections reset at each: ${cuts.map((c) => c.reset).join(', ')}; new connections it took in the up phase before each: ${cuts.map((c) => c.servedBefore).join(', ')}`);
  report.note(`connections taken: endpoint 1 ${flapping.stats().accepted}, endpoint 2 ${steady.stats().accepted}`);
  report.note(`verify and settle answers: ${statusHistogram(answers)}; verify answered in ${Math.min(...verifyMs)}–${slowest} ms (through the test's forwarder; the slowest began ${lastToggle ? `${slowestAt - lastToggle.at} ms after endpoint 1 went ${lastToggle.down ? 'down' : 'up'}` : `${slowestAt - started} ms after the first payment, before any flap`}); ${verifiesWhileDown} of ${COUNT} payments arrived while endpoint 1 was down`);
  report.note(`/readyz samples (every ${READYZ_EVERY_MS} ms): ${[...readyzHist].map(([k, n]) => `${k} ×${n}`).join(', ')}`);
  report.note(`worker warnings and errors: ${summarizeWarnings(worker.lines)}; every settlement final ${allFinalSeconds.toFixed(1)} s after the first payment arrived`);
  for (const a of answers.filter((x) => x.status !== 200).slice(0, 5)) {
    report.note(`unexpected answer: ${a.method} ${a.path} ${a.status} ${JSON.stringify(a.body).slice(0, 300)}; the API logged: ${apiLogAbout(api, a.requestId)}`);
  }

  // every check is recorded before any is asserted, so a failing scenario still has its full record (ledger included)
  const failedChecks: string[] = [];
  const check = (what: string, expected: unknown, observedValue: unknown) => void (report.check(what, expected, observedValue) || failedChecks.push(`${what}: expected ${expected}, observed ${observedValue}`));
  const assert = (what: string, expected: string, observedValue: unknown, ok: boolean) => void (report.assert(what, expected, observedValue, ok) || failedChecks.push(`${what}: expected ${expected}, observed ${observedValue}`));
  assert('cuts of endpoint 1 during the run', `at least ${CUTS}`, cuts.length, cuts.length >= CUTS);
  assert('cuts while money was moving (a settlement between fee and transfer, or a transaction in flight)', 'at least 1', cuts.filter((c) => c.moving > 0).length, cuts.some((c) => c.moving > 0));
  assert('open connections to endpoint 1 reset by the cuts', 'at least 1', resets, resets >= 1);
  assert('cuts that found endpoint 1 back in use after an earlier cut', 'at least 1', servedAgain, servedAgain >= 1);
  assert('payments that arrived while endpoint 1 was down', 'at least 1', verifiesWhileDown, verifiesWhileDown >= 1);
  check('5xx answers to verify and settle (endpoint 2 up throughout)', 0, answers.filter((a) => a.status >= 500).length);
  check('verify and settle answers other than 200', 0, answers.filter((a) => a.status !== 200).length);
  assert('slowest verify answer', `under ${SLOWEST_VERIFY_MS} ms (no wait for an RPC timeout)`, `${slowest} ms`, slowest < SLOWEST_VERIFY_MS);
  check('/readyz samples answered 200', readyz.length, readyz.filter((r) => r.status === 200).length);
  assert('/readyz samples naming endpoint 1 down, and ok', 'some of each', `${partsDown} down, ${partsUp} ok`, partsDown > 0 && partsUp > 0);
  check('settlements still open at the end', 0, open);
  check('settlements parked for an operator', 0, parked);
  check('API and worker processes still running (neither restarted)', true, api.alive() && worker.child.exitCode === null && worker.child.signalCode === null);
  if (!(await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger, atomic: true }))) failedChecks.push('ledger checks (see the scenario record)');
  expect(failedChecks).toEqual([]);
}, 150_000);
