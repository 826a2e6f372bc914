// Scenario: Postgres (a private instance, so the machine's shared one is never touched) is stopped with a
// fast shutdown, stays down 3 s and starts again, while new payments are verified and settled (1 s blocks).
// Every answer the API gives during the run is recorded: a dependency down must read as a clear 503.
import supertest from 'supertest';
import { applyMigrations, createPrismaClient } from '@facilitator/db';
import { isEnvelope, leaksInternals, recordAnswers, statusHistogram, type AnswerRecorder } from '../support/answer-recorder';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres';
import { startTestStack, TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, sleep, startSettlement, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const COUNT = 40;
const ARRIVAL_MS = 200;
const RESTART_AFTER_MS = 2_500;
const DOWN_MS = 3_000;
const report = new ScenarioReport(
  '3-postgres-restart',
  'Postgres restarted during verifies and settlements',
  `Postgres stopped (pg_ctl stop -m fast) for ${DOWN_MS / 1000} s and started again while ${COUNT} new payments arrive at 5 per second, each verified then settled (Form B), 1 s blocks`,
);
let pg: PrivatePostgres;
let stack: TestStack;
let recorder: AnswerRecorder;

beforeAll(async () => {
  pg = await startPrivatePostgres();
  const url = await pg.createDatabase('facilitator');
  await applyMigrations(url);
  const prisma = createPrismaClient(url, { poolMax: 4 });
  stack = await startTestStack({
    database: { url, prisma, drop: () => prisma.$disconnect() },
    devnet: { blockTime: 1 },
  });
  recorder = recordAnswers(stack.api.app);
}, 60_000);
afterAll(async () => {
  report.save();
  await stack?.stop();
  await pg?.destroy();
});

it('the API answers 503 service_unavailable while Postgres is down, recovers by itself, and every settlement ends settled once', async () => {
  // every request of the scenario goes through the recorder, startSettlement's retries included
  const observed: TestStack = { ...stack, http: supertest(recorder.listener) };
  const worker = await stack.startWorker();
  const ledger = await ledgerStart(stack);
  const verificationIds: string[] = [];
  const settlementIds: string[] = [];
  const failures: string[] = [];

  // one payment: verify (the same signed payment again after a 503), then settle
  async function flow(): Promise<void> {
    const body = (await stack.payment()).formB();
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await observed.http.post('/v1/verify').send(body);
      if (res.status === 200) {
        verificationIds.push(res.body.verification_id);
        settlementIds.push(await startSettlement(observed, res.body.verification_id));
        return;
      }
      if (res.status !== 503 || Date.now() > deadline) throw new Error(`verify answered ${res.status}: ${JSON.stringify(res.body)}`);
      await sleep(250);
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

  await sleep(RESTART_AFTER_MS);
  const moving = await stack.db.prisma.settlement.count({ where: { state: { notIn: ['settled', 'failed'] } } });
  const stoppedAt = Date.now();
  await pg.stop('fast');
  const downAt = Date.now();
  await sleep(DOWN_MS);
  await pg.start();
  const backAt = Date.now();

  await arrivals;
  await Promise.all(flows);
  const streamSeconds = (Date.now() - started) / 1000;
  const open = await waitAllFinal(stack, settlementIds, 90_000);
  const ready = await observed.http.get('/readyz');

  const answers = recorder.answers.filter((a) => a.method === 'POST' && (a.path === '/v1/verify' || a.path === '/v1/settle'));
  const verifies = answers.filter((a) => a.path === '/v1/verify');
  const settles = answers.filter((a) => a.path === '/v1/settle');
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

  report.note(`Postgres stopped ${((stoppedAt - started) / 1000).toFixed(1)} s into the stream (the fast shutdown took ${downAt - stoppedAt} ms), down ${((backAt - downAt) / 1000).toFixed(1)} s; settlements not yet final at the stop: ${moving}`);
  report.note(`answers to POST /v1/verify: ${statusHistogram(verifies)}; to POST /v1/settle: ${statusHistogram(settles)}; the stream of ${COUNT} payments took ${streamSeconds.toFixed(1)} s`);
  report.note(`503 messages: ${[...new Set(unavailable.map((a) => (a.body as { error?: { message?: string } }).error?.message))].join(' | ') || 'none'}; Retry-After: ${[...new Set(unavailable.map((a) => a.retryAfter))].join(', ') || 'none'}`);
  report.note(`first 200 for a request that arrived after Postgres was back: ${recoverySeconds.toFixed(2)} s after it was back; 503s for requests arriving more than 1 s after: ${lateUnavailable.length}`);
  report.note(`worker process ${worker.child.pid} kept running through the restart; API never restarted`);
  for (const a of [...otherServerErrors, ...unexpected].slice(0, 5)) report.note(`unexpected answer: ${a.method} ${a.path} ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
  for (const f of failures.slice(0, 5)) report.note(`payment flow failed: ${f.slice(0, 300)}`);

  expect(report.assert('settlements not yet final when Postgres stopped', 'at least 1', moving, moving > 0)).toBe(true);
  expect(report.assert('503 answers while Postgres was down', 'at least 1', unavailable.length, unavailable.length > 0)).toBe(true);
  expect(report.check('5xx answers other than 503', 0, otherServerErrors.length)).toBe(true);
  expect(report.check('answers other than 200 or 503', 0, unexpected.length)).toBe(true);
  expect(report.check('503 answers in the envelope with code service_unavailable', unavailable.length, inEnvelope.length)).toBe(true);
  expect(report.check('error answers exposing internals (stack trace, driver text)', 0, leaking.length)).toBe(true);
  expect(report.assert('first 200 after Postgres was back, without restarting the API', 'within 5 s', `${recoverySeconds.toFixed(2)} s`, recoverySeconds <= 5)).toBe(true);
  expect(report.check('payments whose verify and settle went through', COUNT, settlementIds.length)).toBe(true);
  expect(report.check('API ready again (/readyz)', 200, ready.status)).toBe(true);
  expect(report.check('worker process still running (not restarted)', true, worker.child.exitCode === null && worker.child.signalCode === null)).toBe(true);
  expect(report.check('settlements still open at the end', 0, open)).toBe(true);
  expect(await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger })).toBe(true);
}, 240_000);
