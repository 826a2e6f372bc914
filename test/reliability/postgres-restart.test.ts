// Scenario: Postgres (a private instance, so the machine's shared one is never touched) is stopped with a
// fast shutdown, stays down 3 s and starts again, while new payments are verified and settled (1 s blocks)
// and clients keep retrying settles and reading statuses. Every answer the API gives is recorded: a
// dependency that is down must read as a clear 503, never a 500, and the API must recover by itself.
//
// The API runs compiled, as its own process (as production does, like the worker): inside jest, errors
// made by Node itself (e.g. ECONNREFUSED from a socket) come from another realm, fail the API's
// `instanceof Error` checks and would be answered 500 where production answers 503.
import { setTimeout as sleep } from 'node:timers/promises';
import supertest from 'supertest';
import { applyMigrations, createPgPool, createPrismaClient, type SettlementState } from '@facilitator/db';
import { forwardTo, isEnvelope, leaksInternals, recordAnswers, statusHistogram, type AnswerRecorder, type RecordedAnswer } from '../support/answer-recorder';
import { apiLogAbout, startApiProcess, type ApiProcess } from '../support/api-process';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { QUEUE_BACKEND, startTestStack, TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 40;
const ARRIVAL_MS = 200;
const RESTART_AFTER_MS = 2_500;
const DOWN_MS = 3_000;
const SETTLE_AFTER_MS = 1_000;
const RETRYING_CLIENTS = 8;
const MOVING: SettlementState[] = ['collect_fee', 'fee_collected', 'executing'];
// npm run test:postgres-queues runs it again with the queues in the same Postgres that restarts
const onPostgresQueues = QUEUE_BACKEND === 'postgres';
const report = new ScenarioReport(
  onPostgresQueues ? '3b-postgres-restart-postgres-queues' : '3-postgres-restart',
  `Postgres restarted during verifies and settlements${onPostgresQueues ? ', with the queues in it (QUEUE_BACKEND=postgres)' : ''}`,
  `Postgres stopped (pg_ctl stop -m fast) for ${DOWN_MS / 1000} s and started again while ${COUNT} new payments arrive at 5 per second, each verified then settled (Form B), ${RETRYING_CLIENTS} clients keep re-sending settles of accepted payments, and statuses are read (compiled API process, 1 s blocks)`,
);
let pg: PrivatePostgres;
let stack: TestStack;
let api: ApiProcess;
let recorder: AnswerRecorder;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  const url = await pg.createDatabase('facilitator');
  await applyMigrations(url);
  const prisma = createPrismaClient(url, { poolMax: 4 });
  const pool = createPgPool(url, 4);
  stack = await startTestStack({
    executor: true,
    database: { url, prisma, pool, drop: async () => void (await Promise.all([prisma.$disconnect(), pool.end()])) },
    devnet: { blockTime: 1 },
  });
  api = await startApiProcess({ ...stack.env, API_PROCESSES: '1', LOG_LEVEL: 'warn' });
  recorder = recordAnswers(forwardTo(api.url));
}, 60_000);
afterAll(async () => {
  await api?.stop();
  await stack?.stop();
  await pg?.destroy();
  // last: it throws when a check failed, after the clean-up
  report.save();
});

it('the API answers 503 service_unavailable while Postgres is down, recovers by itself, and every settlement ends settled once', async () => {
  // every request of the scenario goes through the recorder, startSettlement's retries included
  const observed: TestStack = { ...stack, http: supertest(recorder.listener) };
  const worker = await stack.startWorker();
  const ledger = await ledgerStart(stack);
  const verificationIds: string[] = [];
  const settlementIds: string[] = [];
  const accepted: string[] = []; // verification ids whose settle was accepted
  const failures: string[] = [];

  // startSettlement retries 503s; a client also retries after any other failure (the answer is on the
  // record and fails the scenario anyway), so every payment still ends settled and the ledger stays exact
  async function settle(verificationId: string): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startSettlement(observed, verificationId);
      } catch (err) {
        failures.push(`settle of ${verificationId}, attempt ${attempt}: ${(err as Error).message}`);
        if (attempt >= 5) throw err;
        await sleep(500);
      }
    }
  }

  // one payment: verify (the same signed payment again after a failure), then settle a moment later, so
  // some payments verified before the stop are settled while Postgres is down
  async function flow(): Promise<void> {
    const body = (await stack.payment()).formB();
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await observed.http.post('/v1/verify').send(body);
      if (res.status === 200) {
        verificationIds.push(res.body.verification_id);
        await sleep(SETTLE_AFTER_MS);
        settlementIds.push(await settle(res.body.verification_id));
        accepted.push(res.body.verification_id);
        return;
      }
      if (Date.now() > deadline) throw new Error(`verify still answered ${res.status} after 60 s: ${JSON.stringify(res.body)}`);
      // a 503 is retried as the API asks; anything else is on the record, and retried like a client would
      if (res.status !== 503) failures.push(`verify answered ${res.status}: ${JSON.stringify(res.body)}`);
      await sleep(res.status === 503 ? 250 : 500);
    }
  }

  const started = Date.now();
  const flows: Promise<void>[] = [];
  const arrivals = (async () => {
    for (let i = 0; i < COUNT; i++) {
      flows.push(flow().catch((err: Error) => void failures.push(err.message)));
      await sleep(ARRIVAL_MS);
    }
  })();

  // clients that re-send the settle of a payment already accepted (it must give back the same
  // settlement), and a status reader, all along: the database is busy when it goes away
  let busy = true;
  const retrying = Array.from({ length: RETRYING_CLIENTS }, async () => {
    while (busy) {
      const id = accepted[Math.floor(Math.random() * accepted.length)];
      if (id) await observed.http.post('/v1/settle').send({ verification_id: id, destination_address: stack.devnet.accounts.merchant.address });
      await sleep(id ? 10 : 100);
    }
  });
  const reader = (async () => {
    while (busy) {
      const id = settlementIds[settlementIds.length - 1];
      if (id) await observed.http.get(`/v1/settlements/${id}`);
      await sleep(200);
    }
  })();

  // stop while money is moving: at least one settlement sending or waiting for its fee or transfer
  await sleep(RESTART_AFTER_MS);
  const waitUntil = Date.now() + 10_000;
  let moving = 0;
  while (Date.now() < waitUntil) {
    moving = await stack.db.prisma.settlement.count({ where: { state: { in: MOVING } } });
    if (moving > 0) break;
    await sleep(50);
  }
  const statesAtStop = await stack.db.prisma.settlement.groupBy({ by: ['state'], _count: true });
  const stoppedAt = Date.now();
  await pg.stop('fast');
  const downAt = Date.now();
  await sleep(DOWN_MS);
  await pg.start();
  const backAt = Date.now();

  await arrivals;
  await Promise.all(flows);
  busy = false;
  await Promise.all([...retrying, reader]);
  const streamSeconds = (Date.now() - started) / 1000;
  const open = await waitAllFinal(stack, settlementIds, 90_000);
  const ready = await observed.http.get('/readyz');
  const [verificationRows, settlementRows] = await Promise.all([stack.db.prisma.verification.count(), stack.db.prisma.settlement.count()]);

  const answers = recorder.answers.filter((a) => a.path === '/v1/verify' || a.path === '/v1/settle' || a.path.startsWith('/v1/settlements/'));
  const verifies = answers.filter((a) => a.path === '/v1/verify');
  const settles = answers.filter((a) => a.path === '/v1/settle');
  const reads = answers.filter((a) => a.path.startsWith('/v1/settlements/'));
  const unavailable = answers.filter((a) => a.status === 503);
  const otherServerErrors = answers.filter((a) => a.status >= 500 && a.status !== 503);
  const unexpected = answers.filter((a) => a.status !== 200 && a.status !== 503);
  const inEnvelope = unavailable.filter((a) => isEnvelope(a.body, 'service_unavailable'));
  const leaking = answers.filter((a) => a.status !== 200 && leaksInternals(a.body));
  // answers to requests that arrived once Postgres was back: the API must have recovered on its own
  const afterBack = answers.filter((a) => a.startedAt >= backAt);
  const firstOkAfterBack = afterBack.filter((a) => a.status === 200).sort((a, b) => a.at - b.at)[0];
  const recoverySeconds = firstOkAfterBack ? (firstOkAfterBack.at - backAt) / 1000 : Number.POSITIVE_INFINITY;
  const lateUnavailable = afterBack.filter((a) => a.status === 503 && a.startedAt - backAt > 1_000);
  // the settle re-sent for an accepted payment must always give back the settlement it already has
  const resent = settles.filter((a) => a.status === 200);
  const settlementOf = new Map<string, string>();
  let changed = 0;
  for (const a of resent) {
    const body = a.body as { settlement_id?: string; verification_id?: string };
    const key = body.verification_id ?? '';
    if (settlementOf.has(key) && settlementOf.get(key) !== body.settlement_id) changed++;
    settlementOf.set(key, body.settlement_id ?? '');
  }
  const hit = (list: RecordedAnswer[]) => list.filter((a) => a.status === 503).length;

  report.note(`Postgres stopped ${((stoppedAt - started) / 1000).toFixed(1)} s into the stream (the fast shutdown took ${downAt - stoppedAt} ms), down ${((backAt - downAt) / 1000).toFixed(1)} s; settlements moving money at the stop: ${moving} (all states: ${statesAtStop.map((r) => `${r.state} ${r._count}`).join(', ')})`);
  report.note(`answers to POST /v1/verify: ${statusHistogram(verifies)}; to POST /v1/settle: ${statusHistogram(settles)}; to GET /v1/settlements/{id}: ${statusHistogram(reads)}; the stream of ${COUNT} payments took ${streamSeconds.toFixed(1)} s`);
  report.note(`rows in the database: ${verificationRows} verifications, ${settlementRows} settlements (a verify answered 503 may have stored one before failing; its retry stores another)`);
  report.note(`503 messages: ${[...new Set(unavailable.map((a) => (a.body as { error?: { message?: string } }).error?.message))].join(' | ') || 'none'}; Retry-After: ${[...new Set(unavailable.map((a) => a.retryAfter))].join(', ') || 'none'}`);
  report.note(`first 200 for a request that arrived after Postgres was back: ${recoverySeconds.toFixed(2)} s after it was back`);
  report.note(`worker log lines at warn or above: ${[...new Set(worker.lines.filter((l) => /"level":"(warn|error)"/.test(l)).map((l) => /"message":"([^"]*)"/.exec(l)?.[1]))].join('; ') || 'none'} (${worker.lines.filter((l) => /"level":"(warn|error)"/.test(l)).length})`);
  for (const a of unexpected.slice(0, 5)) {
    report.note(`unexpected answer: ${a.method} ${a.path} ${a.status} ${JSON.stringify(a.body).slice(0, 200)} ${((a.startedAt - downAt) / 1000).toFixed(2)} s after the stop; the API logged: ${apiLogAbout(api, a.requestId)}`);
  }
  for (const f of failures.slice(0, 5)) report.note(`client saw a failure: ${f.slice(0, 300)}`);
  const workerAlive = worker.child.exitCode === null && worker.child.signalCode === null;
  // a process that died says why in what it wrote last that is not a log line (a crash's stack trace)
  const lastWords = (lines: string[]) => lines.filter((l) => !l.startsWith('{')).slice(-15).join(' | ').slice(0, 2_000) || 'nothing';
  if (!workerAlive) report.note(`the worker exited (code ${worker.child.exitCode}, signal ${worker.child.signalCode}); it wrote last: ${lastWords(worker.lines)}`);
  if (!api.alive()) report.note(`the API exited; it wrote last: ${lastWords(api.lines)}`);

  // every check is recorded before any is asserted, so a failing scenario still has its full record (ledger included)
  const failedChecks: string[] = [];
  const check = (what: string, expected: unknown, observed: unknown) => void (report.check(what, expected, observed) || failedChecks.push(`${what}: expected ${expected}, observed ${observed}`));
  const assert = (what: string, expected: string, observed: unknown, ok: boolean) => void (report.assert(what, expected, observed, ok) || failedChecks.push(`${what}: expected ${expected}, observed ${observed}`));
  assert('settlements moving money when Postgres stopped', 'at least 1', moving, moving > 0);
  assert('503 answers while Postgres was down, per endpoint', 'at least 1 each', `verify ${hit(verifies)}, settle ${hit(settles)}, status ${hit(reads)}`, hit(verifies) > 0 && hit(settles) > 0 && hit(reads) > 0);
  check('5xx answers other than 503', 0, otherServerErrors.length);
  check('answers other than 200 or 503', 0, unexpected.length);
  check('503 answers in the envelope with code service_unavailable', unavailable.length, inEnvelope.length);
  check('error answers exposing internals (stack trace, driver text)', 0, leaking.length);
  assert('first 200 after Postgres was back, without restarting the API', 'within 5 s', `${recoverySeconds.toFixed(2)} s`, recoverySeconds <= 5);
  check('503 answers to requests that arrived more than 1 s after Postgres was back', 0, lateUnavailable.length);
  check('re-sent settles that got a different settlement', 0, changed);
  check('payments whose verify and settle went through', COUNT, settlementIds.length);
  check('API ready again (/readyz)', 200, ready.status);
  check('API process still running (never restarted)', true, api.alive());
  check('worker process still running (never restarted)', true, workerAlive);
  check('settlements still open at the end', 0, open);
  if (!(await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger }))) failedChecks.push('ledger checks (see the scenario record)');
  expect(failedChecks).toEqual([]);
}, 240_000);
