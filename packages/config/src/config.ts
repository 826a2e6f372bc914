import { availableParallelism } from 'node:os';
import { NETWORKS } from '@facilitator/core';
import { ConfigError } from './config-error';
import { Env, EnvReader } from './parsers';

export const LOG_LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] as const;
export const NODE_ENVS = ['development', 'production', 'test'] as const;

export interface NetworkConfig {
  chainId: number;
  caip2: string;
  legacyName: string;
  rpcUrl: string;
  /** lowercase */
  tokenAddress: string;
  /** When unset, read once from the token's name()/version() and cached. */
  eip712Name?: string;
  eip712Version?: string;
  confirmations: number;
}

export interface KeyConfig {
  privateKey: string;
  /** lowercase */
  address: string;
}

export interface Config {
  nodeEnv: (typeof NODE_ENVS)[number];
  databaseUrl: string;
  redisUrl: string;
  /** REDIS_CLUSTER_NODES: when set, every connection goes to this Redis Cluster instead of REDIS_URL */
  redisClusterNodes: Array<{ host: string; port: number }>;
  /** the effective prefix: on a cluster, wrapped in a hash tag ({x402}) so each queue's keys share a slot */
  queuePrefix: string;
  port: number;
  host: string;
  /** API processes (Node cluster) sharing the port; default one per CPU core */
  apiProcesses: number;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Only the networks whose RPC URL is set. */
  networks: NetworkConfig[];
  treasury: KeyConfig;
  relayers: KeyConfig[];
  feeAmount: bigint;
  webhookSecret: string;
  apiKeys: string[];
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  /** An authorization must stay valid this long after verify, so that it can still be settled. */
  authorizationExpiryMarginSeconds: number;
  /** How long POST /v1/settle waits for an outcome before answering 202 pending. */
  settleWaitTimeoutMs: number;
  /** How long an Idempotency-Key is remembered. */
  idempotencyTtlSeconds: number;
  /** Development and tests only: let webhooks reach private addresses. */
  webhookAllowPrivate: boolean;
  /** Delays before webhook attempts 2 to 6. */
  webhookRetryDelaysMs: number[];
  worker: WorkerConfig;
  /** per-client limit on verify and settle; off (undefined) unless RATE_LIMIT_MAX is set */
  rateLimit?: { max: number; windowMs: number };
  /** Express `trust proxy`: how many proxy hops to trust for the client address (0: none) */
  trustProxyHops: number;
  /** the queue dashboard's basic-auth credentials; the dashboard is off when unset */
  admin?: { username: string; password: string };
}

export const WORKER_QUEUE_NAMES = ['settlement', 'webhook'] as const;

export interface WorkerConfig {
  /** which queues this worker process serves (WORKER_QUEUES); default both */
  queues: Array<(typeof WORKER_QUEUE_NAMES)[number]>;
  settlementConcurrency: number;
  webhookConcurrency: number;
  /** a job whose worker stops renewing its lock for this long is taken back (e.g. after SIGKILL) */
  lockDurationMs: number;
  /** how often stalled jobs are looked for */
  stalledIntervalMs: number;
  /** how long SIGTERM waits for in-flight jobs before exiting */
  shutdownTimeoutMs: number;
  /** 0 disables the metrics listener */
  metricsPort: number;
  /** how often the sweeper looks for records whose job was lost */
  sweepIntervalMs: number;
  /** a non-final record untouched this long is checked for a lost job */
  sweepStaleAfterMs: number;
}

/** The spec's schedule: attempt 1 at once, then after 1 min, 5 min, 15 min, 30 min and 1 h. */
export const WEBHOOK_RETRY_DELAYS_MS = [60_000, 300_000, 900_000, 1_800_000, 3_600_000] as const;

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

function readNetworks(reader: EnvReader): NetworkConfig[] {
  const enabled: NetworkConfig[] = [];
  for (const network of NETWORKS) {
    const id = network.chainId;
    const rpcUrl = reader.optionalUrl(`RPC_URL_${id}`, ['http:', 'https:']);
    if (rpcUrl === undefined) continue;
    enabled.push({
      chainId: id,
      caip2: network.caip2,
      legacyName: network.legacyName,
      rpcUrl,
      tokenAddress: reader.address(`TOKEN_ADDRESS_${id}`, network.defaultTokenAddress),
      eip712Name: reader.optionalString(`TOKEN_EIP712_NAME_${id}`),
      eip712Version: reader.optionalString(`TOKEN_EIP712_VERSION_${id}`),
      confirmations: reader.integer(`CONFIRMATIONS_${id}`, 1, 1, 100),
    });
  }
  if (enabled.length === 0) {
    throw new ConfigError(
      NETWORKS.map((n) => `RPC_URL_${n.chainId}`).join(' / '),
      'must be set for at least one network (a network is enabled only when its RPC URL is set)',
    );
  }
  return enabled;
}

function readRelayers(reader: EnvReader, treasury: KeyConfig): KeyConfig[] {
  const keys = reader.list('RELAYER_PRIVATE_KEYS');
  if (keys.length === 0) return [treasury];
  const relayers = keys.map((key, index) => {
    try {
      return reader.privateKey('RELAYER_PRIVATE_KEYS', key);
    } catch (err) {
      if (err instanceof ConfigError) throw new ConfigError('RELAYER_PRIVATE_KEYS', `entry ${index + 1} must be a 32-byte hex private key`);
      throw err;
    }
  });
  if (new Set(relayers.map((r) => r.address)).size !== relayers.length) {
    throw new ConfigError('RELAYER_PRIVATE_KEYS', 'lists the same key twice');
  }
  return relayers;
}

function readWebhookAllowPrivate(reader: EnvReader, nodeEnv: Config['nodeEnv']): boolean {
  const allow = reader.boolean('WEBHOOK_ALLOW_PRIVATE', false);
  if (allow && nodeEnv === 'production') throw new ConfigError('WEBHOOK_ALLOW_PRIVATE', 'must not be true in production');
  return allow;
}

function readWorker(reader: EnvReader): WorkerConfig {
  const queues = reader.list('WORKER_QUEUES');
  const unknown = queues.find((q) => !WORKER_QUEUE_NAMES.includes(q as WorkerConfig['queues'][number]));
  if (unknown !== undefined) throw new ConfigError('WORKER_QUEUES', `names an unknown queue "${unknown}" (known: ${WORKER_QUEUE_NAMES.join(', ')})`);
  return {
    queues: (queues.length > 0 ? queues : [...WORKER_QUEUE_NAMES]) as WorkerConfig['queues'],
    settlementConcurrency: reader.integer('SETTLEMENT_CONCURRENCY', 200, 1, 1000),
    webhookConcurrency: reader.integer('WEBHOOK_CONCURRENCY', 20, 1, 1000),
    lockDurationMs: reader.integer('WORKER_LOCK_DURATION_MS', 15_000, 1_000, 600_000),
    stalledIntervalMs: reader.integer('WORKER_STALLED_INTERVAL_MS', 5_000, 500, 600_000),
    shutdownTimeoutMs: reader.integer('WORKER_SHUTDOWN_TIMEOUT_MS', 25_000, 0, 600_000),
    metricsPort: reader.integer('WORKER_METRICS_PORT', 0, 0, 65535),
    sweepIntervalMs: reader.integer('SWEEP_INTERVAL_MS', 30_000, 100, 3_600_000),
    sweepStaleAfterMs: reader.integer('SWEEP_STALE_AFTER_MS', 60_000, 100, 86_400_000),
  };
}

function readClusterNodes(reader: EnvReader): Config['redisClusterNodes'] {
  return reader.list('REDIS_CLUSTER_NODES').map((item) => {
    const match = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):([0-9]{1,5})$/.exec(item);
    if (!match || Number(match[2]) > 65535) throw new ConfigError('REDIS_CLUSTER_NODES', `entry "${item}" must be host:port`);
    return { host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) };
  });
}

function readRateLimit(reader: EnvReader): Config['rateLimit'] {
  const max = reader.integer('RATE_LIMIT_MAX', 0, 0, 1_000_000);
  const windowMs = reader.integer('RATE_LIMIT_WINDOW_MS', 60_000, 1_000, 3_600_000);
  // the spec states no rate limit, so none applies unless an operator sets one
  return max > 0 ? { max, windowMs } : undefined;
}

function readAdmin(reader: EnvReader): Config['admin'] {
  const username = reader.optionalString('ADMIN_USERNAME');
  const password = reader.optionalString('ADMIN_PASSWORD');
  if (username === undefined && password === undefined) return undefined;
  if (username === undefined) throw new ConfigError('ADMIN_USERNAME', 'must be set together with ADMIN_PASSWORD');
  if (password === undefined) throw new ConfigError('ADMIN_PASSWORD', 'must be set together with ADMIN_USERNAME');
  if (password.length < 12) throw new ConfigError('ADMIN_PASSWORD', 'must be at least 12 characters');
  return { username, password };
}

/** Reads and validates the whole configuration. Throws a ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const reader = new EnvReader(env);
  const nodeEnv = reader.oneOf('NODE_ENV', NODE_ENVS, 'development');
  const treasury = reader.privateKey('TREASURY_PRIVATE_KEY', reader.raw('TREASURY_PRIVATE_KEY'));
  const queuePrefix = reader.string('QUEUE_PREFIX', 'x402');
  if (!/^[A-Za-z0-9_.{}-]{1,64}$/.test(queuePrefix)) {
    throw new ConfigError('QUEUE_PREFIX', 'may only contain letters, digits, "_", ".", "-", "{" and "}" (at most 64)');
  }
  const clusterNodes = readClusterNodes(reader);
  return {
    nodeEnv,
    databaseUrl: reader.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: reader.url('REDIS_URL', ['redis:', 'rediss:'], DEFAULT_REDIS_URL),
    redisClusterNodes: clusterNodes,
    queuePrefix: clusterNodes.length > 0 && !queuePrefix.includes('{') ? `{${queuePrefix}}` : queuePrefix,
    port: reader.integer('PORT', 4020, 0, 65535),
    host: reader.string('HOST', '0.0.0.0'),
    apiProcesses: reader.integer('API_PROCESSES', availableParallelism(), 1, 256),
    logLevel: reader.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    networks: readNetworks(reader),
    treasury,
    relayers: readRelayers(reader, treasury),
    feeAmount: reader.bigint('FEE_AMOUNT', 10_000n),
    webhookSecret: reader.string('WEBHOOK_SECRET'),
    apiKeys: reader.list('API_KEYS'),
    maxBodyBytes: reader.integer('MAX_BODY_BYTES', 64 * 1024, 1024, 10 * 1024 * 1024),
    authorizationExpiryMarginSeconds: reader.integer('AUTHORIZATION_EXPIRY_MARGIN_SECONDS', 10, 0, 3600),
    settleWaitTimeoutMs: reader.milliseconds('SETTLE_WAIT_TIMEOUT_MS', 30_000),
    idempotencyTtlSeconds: reader.integer('IDEMPOTENCY_TTL_SECONDS', 24 * 60 * 60, 60, 30 * 24 * 60 * 60),
    webhookAllowPrivate: readWebhookAllowPrivate(reader, nodeEnv),
    webhookRetryDelaysMs: reader.millisecondsList('WEBHOOK_RETRY_DELAYS_MS', WEBHOOK_RETRY_DELAYS_MS, 5),
    worker: readWorker(reader),
    admin: readAdmin(reader),
    rateLimit: readRateLimit(reader),
    trustProxyHops: reader.integer('TRUST_PROXY_HOPS', 0, 0, 10),
  };
}

/** For process entry points: the one-line failure the operator sees, then exit 1. */
export function loadConfigOrExit(env: Env = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
