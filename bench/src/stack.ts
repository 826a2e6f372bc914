// The facilitator as production runs it, started by the benchmark itself: compiled apps as child
// processes, a fresh database, and a queue prefix of its own on the shared Redis.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { deleteQueueKeys } from '@facilitator/queue';
import { Client } from 'pg';
import type { Devnet } from '@facilitator/evm-devnet';
import { applyMigrations } from '@facilitator/db';
import { setTimeout as sleep } from 'node:timers/promises';

export const ROOT = path.resolve(__dirname, '../..');
export const API_MAIN = path.join(ROOT, 'apps/api/dist/main.js');
export const WORKER_MAIN = path.join(ROOT, 'apps/worker/dist/main.js');
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export function adminDatabaseUrl(): string {
  return process.env.BENCH_DATABASE_ADMIN_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
}

async function withAdmin<T>(work: (admin: Client) => Promise<T>): Promise<T> {
  const admin = new Client({ connectionString: adminDatabaseUrl() });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A new, migrated database: a benchmark must not be slowed or skewed by rows a previous run left. */
export async function createDatabase(migrationsDir?: string): Promise<BenchDatabase> {
  const name = `facilitator_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${name}`;
  // another build's migrations (code-tree.ts) when given, applied by this checkout's runner
  await applyMigrations(url.toString(), migrationsDir ? { migrationsDir } : {});
  return {
    name,
    url: url.toString(),
    drop: () => withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

/** A port the OS says is free right now (tiny race with other programs, acceptable for a benchmark). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export function stackEnv(devnet: Devnet, databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: `bench${randomBytes(4).toString('hex')}`,
    HOST: '127.0.0.1',
    RPC_URL_84532: devnet.rpcUrl,
    TOKEN_ADDRESS_84532: devnet.token,
    TREASURY_PRIVATE_KEY: devnet.accounts.treasury.privateKey,
    RELAYER_PRIVATE_KEYS: devnet.accounts.relayers.map((r) => r.privateKey).join(','),
    WEBHOOK_SECRET: 'bench-webhook-master-secret-0123456789',
    LOG_LEVEL: 'warn',
    // the rate limits are on by default; a bench's load comes from one address, so it raises them out of the way
    RATE_LIMIT_MAX: '100000000',
    MERCHANT_RATE_LIMIT_MAX: '100000000',
    ...extra,
    // BENCH_APP_<NAME>=value sets <NAME> for the API and worker (e.g. BENCH_APP_FINALITY_POLL_MS), for experiments
    ...Object.fromEntries(
      Object.entries(process.env)
        .filter(([key, value]) => key.startsWith('BENCH_APP_') && value !== undefined)
        .map(([key, value]) => [key.slice('BENCH_APP_'.length), value as string]),
    ),
  };
}

export interface AppProcess {
  child: ChildProcess;
  /** The last lines the process wrote (kept short: a busy app at info level writes a lot). */
  output(): string;
  stop(): Promise<void>;
}

function runApp(main: string, env: Record<string, string>, nodeArgs: string[] = []): AppProcess {
  if (!existsSync(main)) throw new Error(`${main} is missing: run "npm run build" first`);
  const child = spawn(process.execPath, [...nodeArgs, main], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-8_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => tail,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      // the API primary waits for its cluster workers; do not let a stuck one hold the benchmark
      const escalate = setTimeout(() => child.kill('SIGKILL'), 12_000);
      await exited;
      clearTimeout(escalate);
    },
  };
}

/** Starts the compiled API and resolves once /readyz answers 200 (Postgres, Redis and RPC reachable). */
export async function startApi(env: Record<string, string>, nodeArgs: string[] = [], main = API_MAIN): Promise<AppProcess & { url: string }> {
  const port = Number(env.PORT ?? (await freePort()));
  const app = runApp(main, { ...env, PORT: String(port) }, nodeArgs);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (app.child.exitCode !== null) throw new Error(`API exited during start-up:\n${app.output()}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await app.stop();
      throw new Error(`API never became ready:\n${app.output()}`);
    }
    await sleep(100);
  }
  // With a cluster, the first ready answer proves one process is up; give the others a moment to bind.
  await sleep(500);
  return { ...app, url };
}

/** Starts the compiled worker; it says "worker started" at info level once its queues are being served. */
export async function startWorker(env: Record<string, string>, nodeArgs: string[] = [], main = WORKER_MAIN): Promise<AppProcess> {
  const app = runApp(main, env, nodeArgs);
  const deadline = Date.now() + 30_000;
  while (!app.output().includes('"worker started"')) {
    if (app.child.exitCode !== null) throw new Error(`worker exited during start-up:\n${app.output()}`);
    if (Date.now() > deadline) {
      await app.stop();
      throw new Error(`worker did not start:\n${app.output()}`);
    }
    await sleep(50);
  }
  return app;
}

/** Node flags that make an app write a V8 CPU profile into BENCH_CPU_PROF_DIR when it exits (none when unset). */
export function profilingArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', '--cpu-prof-dir', dir] : [];
}

/** Removes every Redis key under a run's queue prefix, so benchmark runs leave nothing behind. */
export function deleteRedisKeys(prefix: string): Promise<void> {
  return deleteQueueKeys(REDIS_URL, prefix);
}

// Cleanups of whatever a benchmark started (apps, databases, Redis keys), run on SIGINT/SIGTERM so an
// interrupted run leaves no processes, databases or queue keys behind.
const cleanups = new Set<() => Promise<unknown>>();
let handlersInstalled = false;

/** Registers a cleanup until the returned function is called (normally in the benchmark's `finally`). */
export function cleanupOnSignal(cleanup: () => Promise<unknown>): () => void {
  cleanups.add(cleanup);
  if (!handlersInstalled) {
    handlersInstalled = true;
    const onSignal = (signal: NodeJS.Signals) => {
      process.stderr.write(`[bench] ${signal}: stopping what the benchmark started\n`);
      const all = Promise.allSettled([...cleanups].map((c) => c()));
      const timeout = new Promise((r) => setTimeout(r, 15_000).unref());
      void Promise.race([all, timeout]).then(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  return () => cleanups.delete(cleanup);
}
