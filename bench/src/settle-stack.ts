// The stack a settlement benchmark runs against: anvil with USDC funded for the run, a fresh database, the
// compiled API cluster and worker process(es); torn down by `stop` or on SIGINT/SIGTERM.
import { parseUnits } from 'ethers';
import { Client } from 'pg';
import type { Devnet } from '@facilitator/evm-devnet';
import { currentTree, type CodeTree } from './code-tree';
import { PRICE_UNITS } from './payments';
import { cleanupOnSignal, createDatabase, deleteRedisKeys, profilingArgs, stackEnv, startApi, startWorker, type AppProcess } from './stack';

const FEE_UNITS = 10_000n;

export interface SettleStackOptions {
  /** seconds between blocks; undefined = automine (a block per transaction) */
  blockTime?: number;
  /** relayer keys the worker sends transfers from (of the devnet's 3) */
  relayers: number;
  /** settlements the run will make: the payer, merchant and allowance are funded for them */
  settlements: number;
  apiProcesses: number;
  workerProcesses?: number;
  /** extra worker environment, e.g. SETTLEMENT_CONCURRENCY */
  workerEnv?: Record<string, string>;
  /**
   * sequential (default): the two-transaction path, as measured since the first wave; atomic: the treasury
   * delegates to the settlement executor for the relayers used, and fee and transfer are one batched item
   */
  path?: 'sequential' | 'atomic';
  /** the build to run (its apps, migrations and devnet); default this checkout's */
  tree?: CodeTree;
}

export interface SettleStack {
  devnet: Devnet;
  /** a connection to the run's database, for reading settlement outcomes */
  db: Client;
  api: AppProcess & { url: string };
  workers: AppProcess[];
  /** process trees for startCpuMeter: api, worker(s), anvil, bench */
  cpuTrees: Record<string, number>;
  /** the run's database name, for telling its Postgres backends from other databases' (proc.ts) */
  databaseName: string;
  stop(): Promise<void>;
}

export async function startSettleStack(options: SettleStackOptions): Promise<SettleStack> {
  const tree = options.tree ?? currentTree();
  const [devnet, database] = await Promise.all([
    tree.devnet.startDevnet({
      relayerCount: 3,
      blockTime: options.blockTime,
      // every settlement moves the price from the payer and the fee from the merchant, with headroom
      payerBalance: parseUnits('1000', 6) + BigInt(options.settlements) * PRICE_UNITS,
      merchantBalance: parseUnits('1000', 6) + BigInt(options.settlements) * FEE_UNITS,
      treasuryAllowance: BigInt(options.settlements + 10) * FEE_UNITS,
    }),
    createDatabase(tree.migrationsDir),
  ]);
  const relayers = devnet.accounts.relayers.slice(0, options.relayers);
  if (options.path === 'atomic') await tree.devnet.setUpDevnetExecutor(devnet, FEE_UNITS, relayers);
  const env = tree.adaptEnv(
    stackEnv(devnet, database.url, {
      SETTLEMENT_MODE: options.path ?? 'sequential',
      API_PROCESSES: String(options.apiProcesses),
      RELAYER_PRIVATE_KEYS: relayers.map((r) => r.privateKey).join(','),
    }),
  );
  const db = new Client({ connectionString: database.url });
  await db.connect();
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
    await db.end();
    await devnet.stop();
    await Promise.all([database.drop(), deleteRedisKeys(env.QUEUE_PREFIX)]);
  };
  const unregister = cleanupOnSignal(stop);
  try {
    const api = await startApi(env, profilingArgs(), tree.apiMain);
    stops.push(() => api.stop());
    // info is the worker's production default, and its "worker started" line is how we know it serves jobs
    const workers: AppProcess[] = [];
    for (let i = 0; i < (options.workerProcesses ?? 1); i++) {
      const worker = await startWorker({ ...env, ...options.workerEnv, LOG_LEVEL: 'info' }, profilingArgs(), tree.workerMain);
      stops.push(() => worker.stop());
      workers.push(worker);
    }
    const cpuTrees: Record<string, number> = { api: api.child.pid!, anvil: devnet.pid, bench: process.pid };
    workers.forEach((w, i) => (cpuTrees[i === 0 ? 'worker' : `worker${i + 1}`] = w.child.pid!));
    return {
      devnet,
      db,
      api,
      workers,
      cpuTrees,
      databaseName: database.name,
      async stop() {
        unregister();
        await stop();
      },
    };
  } catch (err) {
    unregister();
    await stop();
    throw err;
  }
}
