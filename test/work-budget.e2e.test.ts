// The work budget per settlement (issue 41, item 1; docs/work-budget.md): counted, not timed. The compiled
// API and worker run as their own processes, each reaching Postgres, Redis and the chain node through
// counting proxies of its own (test/support/work-counters.ts), so what each process asks is counted apart:
// SQL statements, JSON-RPC calls by method (a batch's one by one), Redis commands, and what the dedicated
// Redis server ran. For each path and mechanism, N payments are offered at once after a warm-up; the
// measured phase ends when every one is settled and nothing more is asked; its counts divided by N must
// stay within the budget table of docs/work-budget.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { getAddress, Wallet } from 'ethers';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { authorizationToJson } from '@facilitator/core';
import { setUpDevnetExecutor, startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { startApiProcess, type ApiProcess } from './support/api-process';
import { createTestDatabase, type TestDatabase } from './support/database';
import { startJsonRpcProxy, type JsonRpcProxy } from './support/json-rpc-proxy';
import { approvePermit2, permit2Request, uptoRequest } from './support/permit2-request';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis';
import { describeWithRedisServer } from './support/test-services';
import { stackEnv, workerEnvWithoutTreasuryKey } from './support/test-stack';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process';
import { breakdown, describeExcess, measuredTable, overBudget, readBudget, round2, type MeasuredWork, type ProcessWork } from './support/work-budget';
import { postgresDelta, redisServerCommands, rpcTally, startPostgresCounter, startRedisCounter, tallyDelta, type PostgresCounter, type RedisCounter, type Tally } from './support/work-counters';

/** payments offered at once per path */
const N = 20;
/** settled first on each path, outside the measured phase (caches, connections, the merchant's row) */
const WARM_UP = N;
const PRICE = 50_000n;
const FEE = 10_000n;

const PATHS = {
  x402Atomic: 'x402 exact EIP-3009, atomic',
  formBAtomic: 'Form B, atomic',
  permit2Atomic: 'x402 exact Permit2, atomic',
  uptoAtomic: 'x402 upto Permit2, atomic',
  x402Sequential: 'x402 exact EIP-3009, sequential',
} as const;
const ORDER = Object.values(PATHS);

/** What every worker runs with: the production defaults for what runs on a timer, and periodic jobs out of the way. */
const WORKER_ENV = {
  // the budget counts what settlements cause; the scheduled jobs (finality watch, sweep, retention, the
  // delegation's recheck) cost per unit of time, not per settlement
  FINALITY_POLL_MS: '600000',
  SWEEP_INTERVAL_MS: '3600000',
  RETENTION_INTERVAL_MS: '3600000',
  EXECUTOR_RECHECK_MS: '3600000',
  // production's, not the fast recovery of the crash tests
  WORKER_LOCK_DURATION_MS: '15000',
  WORKER_STALLED_INTERVAL_MS: '5000',
  // the first ready settlement waits this long for the others: N offered at once share one transaction
  BATCH_WINDOW_MS: '1500',
  // automine answers in milliseconds: a loaded machine must not turn that into a step run again after its
  // job gave its slot up (two reads more per run); a real block's wait is not what this test counts
  SETTLEMENT_IN_SLOT_WAIT_MS: '10000',
};

interface Counted {
  sql: PostgresCounter;
  redis: RedisCounter;
  rpc: JsonRpcProxy;
}

let devnet: Devnet;
let db: TestDatabase;
let redis: PrivateRedis;
let api: ApiProcess;
let worker: WorkerProcess | undefined;
let counted: { api: Counted; worker: Counted };
let env: Record<string, string>;
const measured = new Map<string, MeasuredWork>();
/**
 * N payers, each paying once per burst, as real traffic has many: one payer for all would let the reads of its
 * balance and nonces that are asked at the same moment be shared, which real traffic rarely allows
 */
let payers: Wallet[] = [];
let paid = 0;
const nextPayer = () => payers[paid++ % payers.length];
const budget = readBudget();

async function countedFor(): Promise<Counted> {
  const [sql, redisCounter, rpc] = await Promise.all([startPostgresCounter(db.url), startRedisCounter(redis.url), startJsonRpcProxy(devnet.rpcUrl)]);
  return { sql, redis: redisCounter, rpc };
}

function through(c: Counted): Record<string, string> {
  return { DATABASE_URL: c.sql.url, REDIS_URL: c.redis.url, RPC_URL_84532: c.rpc.url };
}

interface Snapshot {
  api: ProcessWork;
  worker: ProcessWork;
  redisServer: Tally;
}

function processWork(c: Counted): ProcessWork {
  return { sql: c.sql.snapshot(), rpc: rpcTally(c.rpc.requests, devnet.accounts.merchant.address), redis: c.redis.snapshot() };
}

function snapshot(): Snapshot {
  return { api: processWork(counted.api), worker: processWork(counted.worker), redisServer: redisServerCommands(redis.port) };
}

function delta(after: Snapshot, before: Snapshot, settlements: number): MeasuredWork {
  const d = (a: ProcessWork, b: ProcessWork): ProcessWork => ({ sql: postgresDelta(a.sql, b.sql), rpc: tallyDelta(a.rpc, b.rpc), redis: tallyDelta(a.redis, b.redis) });
  return { settlements, api: d(after.api, before.api), worker: d(after.worker, before.worker), redisServer: tallyDelta(after.redisServer, before.redisServer) };
}

/** Waits until neither process asks Postgres or the chain anything for `quietMs` (the work N settlements caused has ended). */
async function quiet(quietMs = 400, timeoutMs = 10_000): Promise<void> {
  const activity = () => [counted.api, counted.worker].map((c) => `${c.sql.snapshot().statements.total}/${c.rpc.requests.length}`).join(' ');
  const deadline = Date.now() + timeoutMs;
  let last = activity();
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    if (Date.now() > deadline) throw new Error(`the processes never went quiet (${activity()})`);
    await sleep(50);
    const now = activity();
    if (now !== last) [last, since] = [now, Date.now()];
  }
}

/** The states of the settlements of these payer nonces, read directly (not through the counted proxies). */
async function settledCount(nonces: string[]): Promise<{ settled: number; failed: number }> {
  const { rows } = await db.pool.query<{ state: string; n: string }>(`SELECT state, count(*) AS n FROM settlements WHERE lower(nonce) = ANY($1) GROUP BY state`, [nonces.map((n) => n.toLowerCase())]);
  const of = (s: string) => Number(rows.find((r) => r.state === s)?.n ?? 0);
  return { settled: of('settled'), failed: of('failed') };
}

async function untilSettled(nonces: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { settled, failed } = await settledCount(nonces);
    if (failed > 0) throw new Error(`${failed} of ${nonces.length} settlements failed:\n${worker?.lines.slice(-20).join('\n')}`);
    if (settled === nonces.length) return;
    if (Date.now() > deadline) throw new Error(`${settled} of ${nonces.length} settled within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** One payment of a path: what the client sends, and the nonce its settlement carries. */
interface Offer {
  nonce: string;
  send(): Promise<unknown>;
}

/** Offers `count` payments at once, waits for every answer and settlement; returns the nonces. */
async function offerAtOnce(make: () => Promise<Offer>, count: number): Promise<string[]> {
  const offers = await Promise.all(Array.from({ length: count }, make));
  await Promise.all(offers.map((o) => o.send()));
  const nonces = offers.map((o) => o.nonce);
  await untilSettled(nonces);
  return nonces;
}

/** The atomic batches (settle transactions) the settlements of these nonces went into. */
async function batchesOf(nonces: string[]): Promise<number> {
  const { rows } = await db.pool.query<{ n: string }>(
    `SELECT count(DISTINCT i.batch_id) AS n FROM settlement_batch_items i JOIN settlements s ON s.id = i.settlement_id WHERE lower(s.nonce) = ANY($1)`,
    [nonces.map((n) => n.toLowerCase())],
  );
  return Number(rows[0].n);
}

/** N at once, counted from a quiet start to a quiet end. */
async function countedBurst(make: () => Promise<Offer>): Promise<{ work: MeasuredWork; nonces: string[] }> {
  const before = snapshot();
  const nonces = await offerAtOnce(make, N);
  await quiet();
  return { work: delta(snapshot(), before, N), nonces };
}

/**
 * Warm-up, then N at once, counted; checks the result against the budget table. On the atomic path the
 * budget is for N settlements sharing one transaction (what BATCH_WINDOW_MS gives when they are offered at
 * once): a burst the machine admitted too slowly for that is measured once more, and a second is an error.
 */
async function measure(pathName: string, make: () => Promise<Offer>, { atomic = true } = {}): Promise<void> {
  await offerAtOnce(make, WARM_UP);
  await quiet();
  let { work, nonces } = await countedBurst(make);
  const first = atomic ? await batchesOf(nonces) : 1;
  if (first !== 1) {
    process.stdout.write(`${pathName}: ${N} payments went into ${first} batches, not one; measuring again\n`);
    ({ work, nonces } = await countedBurst(make));
    const batches = await batchesOf(nonces);
    if (batches !== 1) throw new Error(`${pathName}: ${N} payments offered at once went into ${batches} batches twice; the budget counts them in one (BATCH_WINDOW_MS ${WORKER_ENV.BATCH_WINDOW_MS})`);
  }
  measured.set(pathName, work);
  writeReport();
  const excess = overBudget(budget, pathName, work);
  if (excess.length > 0) {
    throw new Error(
      `${describeExcess(pathName, N, excess)}\n\n(docs/work-budget.md holds the budget; what each process asked, per settlement:)\n` +
        `API SQL:\n${breakdown(work.api.sql.statements, N)}\nworker SQL:\n${breakdown(work.worker.sql.statements, N)}\n` +
        `API RPC:\n${breakdown(work.api.rpc, N)}\nworker RPC:\n${breakdown(work.worker.rpc, N)}\n` +
        `API Redis:\n${breakdown(work.api.redis, N)}\nworker Redis:\n${breakdown(work.worker.redis, N)}`,
    );
  }
}

/** test-results/work-budget.md: today's figures in the budget table's shape, and what each process asked. */
function writeReport(): void {
  const dir = path.resolve(__dirname, '../test-results');
  mkdirSync(dir, { recursive: true });
  const sections = [`# Work per settlement, measured ${new Date().toISOString()} (N = ${N})`, '', measuredTable(measured, ORDER)];
  for (const [name, work] of measured) {
    sections.push('', `## ${name}`);
    for (const [label, tally] of [
      ['API SQL', work.api.sql.statements],
      ['worker SQL', work.worker.sql.statements],
      ['API RPC', work.api.rpc],
      ['worker RPC', work.worker.rpc],
      ['API Redis', work.api.redis],
      ['worker Redis', work.worker.redis],
      ['Redis server', work.redisServer],
    ] as const) {
      sections.push('', `${label}: ${round2(tally.total / work.settlements)} per settlement`, '```', breakdown(tally, work.settlements, 100), '```');
    }
  }
  writeFileSync(path.join(dir, 'work-budget.md'), sections.join('\n') + '\n');
}

async function startWorker(extra: Record<string, string>): Promise<void> {
  await worker?.stop();
  const workerEnv = { ...env, ...through(counted.worker), ...WORKER_ENV, ...extra };
  const sequential = extra.SETTLEMENT_MODE === 'sequential';
  worker = await startWorkerProcess(sequential ? workerEnv : workerEnvWithoutTreasuryKey(workerEnv));
  const announced = sequential ? 'settlements are sequential' : 'settlements are atomic';
  const deadline = Date.now() + 20_000;
  while (!worker.lines.some((l) => l.includes(announced))) {
    if (Date.now() > deadline) throw new Error(`the worker never said "${announced}":\n${worker.lines.join('\n')}`);
    await sleep(50);
  }
}

// ---- the payments of each path ----

const requirements = (): PaymentRequirements => ({
  scheme: 'exact',
  network: 'eip155:84532',
  amount: PRICE.toString(),
  asset: getAddress(devnet.token),
  payTo: getAddress(devnet.accounts.merchant.address),
  maxTimeoutSeconds: 300,
  extra: { name: 'USDC', version: '2' },
});

/** x402 exact EIP-3009: signed by @x402/evm's client, settled through @x402/core's facilitator client. */
async function x402Exact(): Promise<Offer> {
  const req = requirements();
  const client = new x402Client()
    .register('eip155:*', new ExactEvmScheme(privateKeyToAccount(nextPayer().privateKey as `0x${string}`)))
    .setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: req.asset, maxAmountPerPayment: '1000000' }] });
  const payload = await client.createPaymentPayload({ x402Version: 2, resource: { url: 'http://merchant.test/weather' }, accepts: [req] });
  const facilitator = new HTTPFacilitatorClient({ url: `${api.url}/x402` });
  return {
    nonce: String((payload.payload.authorization as { nonce: string }).nonce),
    send: async () => {
      const answer = await facilitator.settle(payload, req);
      if (!answer.success) throw new Error(`x402 settle refused: ${JSON.stringify(answer)}`);
    },
  };
}

async function post(route: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${api.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Form B: verify the payment (its x402 v1 payload), then settle the verification; answered pending at once. */
async function formB(): Promise<Offer> {
  const signed = await devnet.signTransferAuthorization(nextPayer().privateKey, { to: devnet.accounts.merchant.address, value: PRICE });
  const authorization = authorizationToJson(signed.authorization);
  const body = {
    transaction_hash: authorization.nonce,
    chain: 'layer2-sepolia',
    seller_address: devnet.accounts.merchant.address,
    expected_amount: PRICE.toString(),
    expected_token: devnet.token,
    metadata: { source: 'work-budget', paymentPayload: { x402Version: 1, scheme: 'exact', network: 'layer2-sepolia', payload: { authorization, signature: signed.signature } } },
  };
  return {
    nonce: authorization.nonce,
    send: async () => {
      const verified = await post('/v1/verify', body);
      if (verified.status !== 200) throw new Error(`Form B verify: ${verified.status} ${JSON.stringify(verified.body)}`);
      const settled = await post('/v1/settle', { verification_id: verified.body.verification_id, destination_address: devnet.accounts.merchant.address });
      if (settled.status !== 200) throw new Error(`Form B settle: ${settled.status} ${JSON.stringify(settled.body)}`);
    },
  };
}

/** x402 through Permit2 (exact, or upto settled for its whole maximum): the payload @x402/evm's client signs. */
function permit2Offer(kind: 'exact' | 'upto'): () => Promise<Offer> {
  return async () => {
    const fields = { payerKey: nextPayer().privateKey, to: devnet.accounts.merchant.address, value: PRICE };
    const body = kind === 'exact' ? await permit2Request(devnet, fields) : await uptoRequest(devnet, fields);
    return {
      // stored as Permit2's nonce word: 32 bytes of hex
      nonce: '0x' + BigInt(body.paymentPayload.payload.permit2Authorization.nonce).toString(16).padStart(64, '0'),
      send: async () => {
        const answer = await post('/x402/settle', body);
        if (answer.body.success !== true) throw new Error(`x402 ${kind} Permit2 settle: ${answer.status} ${JSON.stringify(answer.body)}`);
      },
    };
  };
}

describeWithRedisServer('work per settlement, within docs/work-budget.md', () => {
  beforeAll(async () => {
    [devnet, db, redis] = await Promise.all([startDevnet(), createTestDatabase(), startPrivateRedis()]);
    await setUpDevnetExecutor(devnet, FEE);
    payers = Array.from({ length: N }, () => new Wallet(Wallet.createRandom().privateKey));
    for (const p of payers) await devnet.mint(p.address, 10n ** 8n);
    await Promise.all(payers.map((p) => approvePermit2(devnet, p.privateKey)));
    counted = { api: await countedFor(), worker: await countedFor() };
    env = stackEnv(devnet, db.url, { QUEUE_BACKEND: 'redis', REDIS_URL: redis.url });
    api = await startApiProcess({ ...env, ...through(counted.api), API_PROCESSES: '1' });
    await startWorker({ SETTLEMENT_MODE: 'atomic' });
  }, 60_000);

  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await api?.stop('SIGKILL');
    for (const c of [counted?.api, counted?.worker]) await Promise.all([c?.sql.stop(), c?.redis.stop(), c?.rpc.close()]);
    await Promise.all([devnet?.stop(), db?.drop(), redis?.stop()]);
  });

  // a path may measure twice (a burst split over two batches): room for it beyond jest's 60 s
  it(`${PATHS.x402Atomic}: ${N} at once through /x402/settle`, () => measure(PATHS.x402Atomic, x402Exact), 120_000);
  it(`${PATHS.formBAtomic}: ${N} at once, verify then settle`, () => measure(PATHS.formBAtomic, formB), 120_000);
  it(`${PATHS.permit2Atomic}: ${N} at once through /x402/settle`, () => measure(PATHS.permit2Atomic, permit2Offer('exact')), 120_000);
  it(`${PATHS.uptoAtomic}: ${N} at once through /x402/settle`, () => measure(PATHS.uptoAtomic, permit2Offer('upto')), 120_000);
  it(`${PATHS.x402Sequential}: ${N} at once through /x402/settle`, async () => {
    // as a network without the atomic path has it: a treasury of its own, not delegated (a delegated one sends
    // one fee at a time, and the others wait their turn: collect-fee.ts's beforeSequentialFee)
    await devnet.provider.send('anvil_setCode', [devnet.accounts.treasury.address, '0x']);
    await startWorker({ SETTLEMENT_MODE: 'sequential' });
    await measure(PATHS.x402Sequential, x402Exact, { atomic: false });
  }, 120_000);
});
