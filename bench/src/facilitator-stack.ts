// Stacks for the benchmarks that compare settlement paths (bench:paid, bench:gas): anvil with USDC and,
// when asked, the treasury's EIP-7702 delegation to the settlement executor; then any number of
// facilitators (a fresh database, the compiled API cluster and a worker each) against that one chain.
// A facilitator's worker can be restarted with other settings (SETTLEMENT_MODE, BATCH_WINDOW_MS) on the
// same database. Every API and worker line at warn or error level is kept, so a benchmark can report what
// went wrong in the facilitator while it measured.
import { parseUnits } from 'ethers';
import { Client } from 'pg';
import { guardChild, startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { mergeProblems, watchProblems, type LogProblems } from './app-logs';
import { log } from './results';
import { cleanupOnSignal, createDatabase, deleteRedisKeys, profilingArgs, stackEnv, startApi, startWorker, type AppProcess, type BenchDatabase } from './stack';
import { setTimeout as sleep } from 'node:timers/promises';

export const FEE_UNITS = 10_000n;

export interface ChainOptions {
  /** seconds between blocks; undefined = automine */
  blockTime?: number;
  relayerCount: number;
  /** USDC the payer spends over the run (price × payments), on top of 1000 USDC */
  payerSpend: bigint;
  /** fees the merchant pays over the run; the treasury's allowance covers them too */
  fees: number;
}

export async function startChain(options: ChainOptions): Promise<Devnet> {
  return startDevnet({
    relayerCount: options.relayerCount,
    blockTime: options.blockTime,
    payerBalance: parseUnits('1000', 6) + options.payerSpend,
    merchantBalance: parseUnits('1000', 6) + BigInt(options.fees) * FEE_UNITS,
    // twice the fees: the fee reservation counts a fee mined but not yet recorded twice for a moment (it
    // refuses rather than over-spends), and a mined batch holds up to ~20 of them at once
    treasuryAllowance: BigInt(2 * options.fees + 10) * FEE_UNITS,
  });
}

export type SettlementModeName = 'atomic' | 'sequential';

export interface FacilitatorOptions {
  /** the relayer keys the worker sends from (in its environment) */
  relayerKeys?: string[];
  /**
   * or relayer keys held elsewhere: RELAYER_SIGNERS (`kms:arn…`, `pkcs11:…`) with the environment those
   * signers need (KMS endpoint and credentials, SOFTHSM2_CONF); the worker then holds no private key at all
   */
  relayerSigners?: { spec: string; env: Record<string, string> };
  apiProcesses: number;
  /** the worker's environment besides the stack's: SETTLEMENT_MODE, BATCH_WINDOW_MS, ... */
  workerEnv: Record<string, string>;
  /** worker processes on the one database and queue (default 1); the others are in `extraWorkers` */
  workerProcesses?: number;
}

export interface Facilitator {
  database: BenchDatabase;
  /** a connection to this facilitator's database */
  db: Client;
  env: Record<string, string>;
  api: AppProcess & { url: string };
  worker: AppProcess;
  /** the worker processes beyond the first (options.workerProcesses), started with the same settings */
  extraWorkers: AppProcess[];
  /** the worker's path as it announced it at start ("settlements are atomic|sequential") */
  mode: SettlementModeName;
  /** stops the worker and starts another with these settings (same database and queues) */
  restartWorker(workerEnv: Record<string, string>): Promise<void>;
  /** warn/error lines of the API and of every worker started so far */
  problems(): LogProblems;
  stop(): Promise<void>;
}

/** Waits for the worker's announcement of the path it chose; fails when it is not `expected`. */
async function workerMode(worker: AppProcess, expected: SettlementModeName | undefined): Promise<SettlementModeName> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const out = worker.output();
    const mode = out.includes('settlements are atomic') ? 'atomic' : out.includes('settlements are sequential') || out.includes('atomic settlement path is not set up') ? 'sequential' : undefined;
    if (mode) {
      if (expected && mode !== expected) throw new Error(`the worker settles ${mode}ly, expected ${expected}:\n${out.slice(-3_000)}`);
      return mode;
    }
    if (worker.child.exitCode !== null) throw new Error(`worker exited:\n${out}`);
    if (Date.now() > deadline) throw new Error(`the worker never said which settlement path it takes:\n${out.slice(-3_000)}`);
    await sleep(50);
  }
}

/** One facilitator (API cluster + worker, fresh database, own queue prefix) against `devnet`. */
export async function startFacilitator(devnet: Devnet, options: FacilitatorOptions): Promise<Facilitator> {
  const database = await createDatabase();
  const env = stackEnv(devnet, database.url, { API_PROCESSES: String(options.apiProcesses), RELAYER_PRIVATE_KEYS: (options.relayerKeys ?? []).join(',') });
  if (options.relayerSigners) {
    delete env.RELAYER_PRIVATE_KEYS;
    Object.assign(env, { RELAYER_SIGNERS: options.relayerSigners.spec }, options.relayerSigners.env);
  }
  const db = new Client({ connectionString: database.url });
  await db.connect();
  const watchers: Array<{ problems(): LogProblems }> = [];
  let api: (AppProcess & { url: string }) | undefined;
  let worker: AppProcess | undefined;
  const extraWorkers: AppProcess[] = [];
  const stopAll = async () => {
    for (const extra of extraWorkers) await extra.stop();
    await worker?.stop();
    await api?.stop();
    await db.end().catch(() => undefined);
    await Promise.all([database.drop(), deleteRedisKeys(env.QUEUE_PREFIX)]);
  };
  const unregister = cleanupOnSignal(stopAll);
  const launchWorker = async (workerEnv: Record<string, string>, extra = false) => {
    // info is the worker's production default; its "worker started" line is how we know it serves jobs
    // custody: on the atomic path the worker holds relayer keys only, the treasury known by address
    const { TREASURY_PRIVATE_KEY: treasuryKey, ...relayersOnly } = env;
    const keys = workerEnv.SETTLEMENT_MODE === 'atomic' ? { ...relayersOnly, TREASURY_ADDRESS: devnet.accounts.treasury.address } : { ...relayersOnly, TREASURY_PRIVATE_KEY: treasuryKey };
    const started = await startWorker({ ...keys, ...workerEnv, LOG_LEVEL: 'info' }, profilingArgs());
    guardChild(started.child);
    watchers.push(watchProblems(started.child));
    if (extra) extraWorkers.push(started);
    else worker = started;
    return workerMode(started, workerEnv.SETTLEMENT_MODE as SettlementModeName | undefined);
  };
  try {
    api = await startApi(env, profilingArgs());
    guardChild(api.child);
    watchers.push(watchProblems(api.child));
    const mode = await launchWorker(options.workerEnv);
    for (let i = 1; i < (options.workerProcesses ?? 1); i++) await launchWorker(options.workerEnv, true);
    const facilitator: Facilitator = {
      database,
      db,
      env,
      api,
      worker: worker!,
      extraWorkers,
      mode,
      async restartWorker(workerEnv) {
        await worker?.stop();
        facilitator.mode = await launchWorker(workerEnv);
        facilitator.worker = worker!;
      },
      problems: () => mergeProblems(watchers.map((w) => w.problems())),
      async stop() {
        unregister();
        await stopAll();
      },
    };
    return facilitator;
  } catch (err) {
    unregister();
    await stopAll();
    throw err;
  }
}

/** Stops anvil when the benchmark is interrupted; call the returned function once it is stopped normally. */
export function stopChainOnSignal(devnet: Devnet): () => void {
  return cleanupOnSignal(() => devnet.stop());
}

export function describeProblems(name: string, p: LogProblems): void {
  if (p.warnings + p.errors === 0) return;
  log(`${name}: ${p.errors} error and ${p.warnings} warning lines; ${p.messages.map((m) => `${m.level} ×${m.count}: ${m.message}`).join('; ')}`);
}

