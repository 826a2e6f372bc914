// Everything an end-to-end test needs, real and isolated: its own anvil with Circle's USDC, its own
// Postgres database, its own queue prefix on the shared Redis, and the API app built from config.
import { randomBytes } from 'node:crypto';
import supertest from 'supertest';
import { Wallet } from 'ethers';
import { setUpDevnetExecutor, startDevnet, type Devnet, type DevnetOptions, type AuthorizationFields } from '@facilitator/evm-devnet';
import { loadConfig, type Config } from '@facilitator/config';
import { authorizationToJson } from '@facilitator/core';
import { deleteQueueKeys, openQueueStore, queueStoreTargetOf, type Queues } from '@facilitator/queue';
import { createSilentLogger, type Logger } from '@facilitator/logging';
import { buildApi, type ApiRuntime } from '../../apps/api/src/build-api';
import { startOpenZeppelinRelayerServer, type LocalRelayerServer } from '@facilitator/relayer-openzeppelin/testing';
import { createTestDatabase, type TestDatabase } from './database';
import { startWorkerProcess, type WorkerProcess } from './worker-process';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * `npm run test:postgres-queues` runs the pipeline's suites again with the queues on BullMQ's PostgreSQL
 * backend; on a machine without Redis every suite does (see test-services.ts).
 */
export const QUEUE_BACKEND = process.env.TEST_QUEUE_BACKEND ?? 'redis';
/**
 * `npm run test:openzeppelin-relayer` runs the settlement suites again with the worker sending through an
 * OpenZeppelin Relayer (a local server speaking its API, sending to the stack's anvil with the devnet's keys).
 */
export const TRANSACTION_PROVIDER = process.env.TEST_TRANSACTION_PROVIDER ?? 'local';
/** the name /readyz gives the queues' datastore */
export const QUEUE_READINESS_CHECK = QUEUE_BACKEND === 'redis' ? 'redis' : 'queues';
/** the master key (at least 32 characters); merchants' own webhook secrets are encrypted with it */
export const WEBHOOK_SECRET = 'test-webhook-master-secret-0123456789';

export interface TestStackOptions {
  /** set up the atomic path (the treasury's delegation to the settlement executor) on the devnet */
  executor?: boolean;
  env?: Record<string, string | undefined>;
  /** an already migrated database to use instead of a fresh clone (e.g. on a private Postgres) */
  database?: TestDatabase;
  devnet?: DevnetOptions;
  logger?: Logger;
}

export interface TestStack {
  devnet: Devnet;
  db: TestDatabase;
  env: Record<string, string>;
  config: Config;
  api: ApiRuntime;
  http: ReturnType<typeof supertest>;
  /** A signed payment to the devnet merchant, as both request forms. */
  payment(fields?: Partial<AuthorizationFields> & { payerKey?: string }): Promise<PaymentBodies>;
  /**
   * Starts the compiled worker app as its own process against this stack; stopped with the stack. It holds
   * the treasury's key unless the stack set up the atomic path (custody: then only when `treasuryKey` is
   * true or `env` gives it).
   */
  startWorker(env?: Record<string, string>, keys?: { treasuryKey?: boolean }): Promise<WorkerProcess>;
  /** SIGKILLs every worker process started so far. */
  killWorkers(): Promise<void>;
  stop(): Promise<void>;
}

export interface PaymentBodies {
  authorization: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string };
  signature: string;
  formA(requirements?: Record<string, unknown>): { payment: Record<string, unknown>; requirements: Record<string, unknown> };
  formB(overrides?: Record<string, unknown>): Record<string, unknown>;
}

export const PRICE_UNITS = 10_000n; // "$0.01"

export function stackEnv(devnet: Devnet, databaseUrl: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    QUEUE_BACKEND,
    QUEUE_PREFIX: `t${randomBytes(6).toString('hex')}`,
    RPC_URL_84532: devnet.rpcUrl,
    TOKEN_ADDRESS_84532: devnet.token,
    TREASURY_PRIVATE_KEY: devnet.accounts.treasury.privateKey,
    RELAYER_PRIVATE_KEYS: devnet.accounts.relayers.map((r) => r.privateKey).join(','),
    WEBHOOK_SECRET,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    // the rate limits are on by default; every request of a test comes from one address (127.0.0.1), so the
    // stacks raise them out of the way; tests of the limits set their own (test/security.e2e.test.ts)
    RATE_LIMIT_MAX: '100000000',
    MERCHANT_RATE_LIMIT_MAX: '100000000',
    ...extra,
  };
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>;
}

export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const [devnet, db] = await Promise.all([startDevnet(options.devnet), options.database ?? createTestDatabase()]);
  const env = stackEnv(devnet, db.url, options.env);
  const config = loadConfig(env);
  if (options.executor) await setUpDevnetExecutor(devnet, config.feeAmount);
  const relayerServer = TRANSACTION_PROVIDER === 'openzeppelin-relayer' ? await startRelayerServer(devnet) : undefined;
  const api = buildApi(config, options.logger ?? createSilentLogger());
  const http = supertest(api.app);

  async function payment(fields: Partial<AuthorizationFields> & { payerKey?: string } = {}): Promise<PaymentBodies> {
    const signed = await devnet.signTransferAuthorization(fields.payerKey ?? devnet.accounts.payer.privateKey, {
      to: fields.to ?? devnet.accounts.merchant.address,
      value: fields.value ?? PRICE_UNITS,
      validAfter: fields.validAfter,
      validBefore: fields.validBefore,
      nonce: fields.nonce,
    });
    const authorization = authorizationToJson(signed.authorization);
    const payload = { authorization, signature: signed.signature };
    return {
      authorization,
      signature: signed.signature,
      formA: (requirements: Record<string, unknown> = {}) => ({
        payment: { x402Version: 2, payload: structuredClone(payload) },
        requirements: {
          scheme: 'exact',
          price: '$0.01',
          network: 'eip155:84532',
          payTo: devnet.accounts.merchant.address,
          token: devnet.token,
          ...requirements,
        },
      }),
      formB: (overrides = {}) => ({
        transaction_hash: authorization.nonce,
        chain: 'layer2-sepolia',
        seller_address: devnet.accounts.merchant.address,
        expected_amount: PRICE_UNITS.toString(),
        expected_token: devnet.token,
        metadata: {
          source: 'test',
          paymentPayload: { x402Version: 1, scheme: 'exact', network: 'layer2-sepolia', payload: structuredClone(payload) },
        },
        ...overrides,
      }),
    };
  }

  const workers: WorkerProcess[] = [];
  return {
    devnet,
    db,
    env,
    config,
    api,
    http,
    payment,
    async startWorker(extra = {}, keys = {}) {
      // with the atomic path set up, the worker holds no treasury key unless a test gives it one: the
      // atomic path signs with relayer keys only (custody), and every atomic suite proves it
      const withKey = keys.treasuryKey ?? (!options.executor || 'TREASURY_PRIVATE_KEY' in extra);
      const custody = relayerServer ? relayerServerEnv(env, relayerServer, withKey) : withKey ? env : workerEnvWithoutTreasuryKey(env);
      const worker = await startWorkerProcess({ ...custody, ...extra });
      workers.push(worker);
      return worker;
    },
    async killWorkers() {
      await Promise.all(workers.splice(0).map((w) => w.stop('SIGKILL')));
    },
    async stop() {
      await Promise.all(workers.map((w) => w.stop('SIGKILL')));
      await api.close();
      await relayerServer?.stop();
      await Promise.all([devnet.stop(), db.drop(), deleteStackQueues(env)]);
    },
  };
}

/** A local OpenZeppelin Relayer holding the devnet's treasury key (relayer "treasury") and relayer keys ("relayer-<n>"). */
function startRelayerServer(devnet: Devnet): Promise<LocalRelayerServer> {
  const { treasury, relayers } = devnet.accounts;
  return startOpenZeppelinRelayerServer({
    rpcUrl: devnet.rpcUrl,
    apiKey: `oz-${randomBytes(8).toString('hex')}`,
    relayers: [{ id: 'treasury', privateKey: treasury.privateKey }, ...relayers.map((r, i) => ({ id: `relayer-${i + 1}`, privateKey: r.privateKey }))],
  });
}

/** A worker sending through the relayer server: no key of its own; the treasury's relayer only when it may send fees. */
function relayerServerEnv(env: Record<string, string>, server: LocalRelayerServer, treasuryRelayer: boolean): Record<string, string> {
  const { RELAYER_PRIVATE_KEYS: _relayerKeys, ...rest } = workerEnvWithoutTreasuryKey(env);
  const ids = server.relayers.map((r) => r.id).filter((id) => treasuryRelayer || id !== 'treasury');
  return {
    ...rest,
    TRANSACTION_PROVIDER: 'openzeppelin-relayer',
    OZ_RELAYER_URL: server.url,
    OZ_RELAYER_API_KEY: server.apiKey,
    OZ_RELAYER_IDS_84532: ids.join(','),
    // the local server holds the treasury's key (relayer "treasury"), so its API key is a treasury credential
    OZ_RELAYER_ALLOW_TREASURY: 'true',
  };
}

/** A worker's environment with the treasury known by address only (no key that can move merchants' allowances). */
export function workerEnvWithoutTreasuryKey(env: Record<string, string>): Record<string, string> {
  const { TREASURY_PRIVATE_KEY: key, ...rest } = env;
  return key === undefined ? rest : { ...rest, TREASURY_ADDRESS: new Wallet(key).address };
}

/** The stack's queues on its own datastore (Redis, or BullMQ's PostgreSQL backend), closed after `work`. */
export async function withStackQueues<T>(config: Config, work: (queues: Queues) => Promise<T>): Promise<T> {
  const store = openQueueStore(queueStoreTargetOf(config, 2));
  const queues = store.openQueues();
  try {
    return await work(queues);
  } finally {
    await queues.close();
    await store.close();
  }
}

/** Removes a stack's queues from Redis; on the PostgreSQL backend they went with the stack's database. */
export async function deleteStackQueues(env: Record<string, string | undefined>): Promise<void> {
  // a test's own Redis Cluster goes away with its keys
  if (env.QUEUE_BACKEND !== 'redis' || !env.QUEUE_PREFIX || env.REDIS_CLUSTER_NODES) return;
  await deleteQueueKeys(env.REDIS_URL ?? REDIS_URL, env.QUEUE_PREFIX);
}
