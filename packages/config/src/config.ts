import { availableParallelism } from 'node:os';
import { ConfigError } from './config-error';
import { readMasterSecret, readRelayerAddresses, readRelayers, readTreasuryAddress, readWebhookPorts } from './key-addresses';
import { Env, EnvReader } from './parsers';
import { readAbuse, readWalletDeployLimits, type AbuseConfig, type WalletDeployLimits } from './sections/abuse';
import { readDiscovery, type DiscoveryConfig } from './sections/discovery';
import { readAdmin, readRateLimits, type AdminCredentials, type RateLimit } from './sections/http';
import { readTransactionProvider, readWorkerKeys, type KeyConfig, type TransactionProviderConfig } from './sections/keys';
import { readNetworks, type NetworkConfig } from './sections/networks';
import { readQueueSettings, type QueueBackend, type RedisClusterNodes } from './sections/queue';
import { readRetention, type RetentionConfig } from './sections/retention';
import { readWebhookAllowPrivate, readWebhookDns, WEBHOOK_RETRY_DELAYS_MS, type WebhookDnsConfig } from './sections/webhooks';
import { readWorker, type WorkerConfig } from './sections/worker';

// The configuration, read and validated once per process. Each section (sections/) reads its own variables;
// this file composes them into what each process reads: the API no key, the worker no HTTP setting.

const LOG_LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] as const;
const NODE_ENVS = ['development', 'production', 'test'] as const;

export interface Config {
  nodeEnv: (typeof NODE_ENVS)[number];
  databaseUrl: string;
  redisUrl: string;
  /** REDIS_CLUSTER_NODES: when set, every connection goes to this Redis Cluster instead of REDIS_URL */
  redisClusterNodes: RedisClusterNodes;
  /** QUEUE_BACKEND: where BullMQ keeps the queues, Redis (default) or the service's own Postgres (DATABASE_URL) */
  queueBackend: QueueBackend;
  /** the effective prefix: on a cluster, wrapped in a hash tag ({x402}) so each queue's keys share a slot */
  queuePrefix: string;
  port: number;
  host: string;
  /** API processes (Node cluster) sharing the port; default one per CPU core */
  apiProcesses: number;
  logLevel: (typeof LOG_LEVELS)[number];
  /** Only the networks whose RPC URL is set. */
  networks: NetworkConfig[];
  /**
   * the treasury's own key (TREASURY_PRIVATE_KEY): only the sequential path uses it, to send each fee (the
   * atomic path's relayers call the treasury's delegated code instead). Absent: no key in this worker can
   * move a merchant's allowance except the fee with a payment, and the sequential path is off.
   */
  treasury?: KeyConfig;
  /**
   * TREASURY_SIGNER: the treasury's key held by a signer (`kms:…`, `pkcs11:…`), instead of TREASURY_PRIVATE_KEY;
   * opened by the worker at start-up (packages/signers)
   */
  treasurySigner?: string;
  /** the keys that send settlements held here (RELAYER_PRIVATE_KEYS; the treasury's key alone when no relayer is configured) */
  relayers: KeyConfig[];
  /**
   * RELAYER_SIGNERS: more relayer keys, each held by a signer (`kms:<key id or ARN>`, `pkcs11:<RFC 7512 URI>`),
   * opened by the worker at start-up; their addresses are known only then
   */
  relayerSigners: string[];
  /**
   * TRANSACTION_PROVIDER: who signs and sends our transactions. `local` (default): this worker, with the keys
   * above (nonces in Postgres, sync sends, batching); `openzeppelin-relayer`: an OpenZeppelin Relayer server,
   * which holds the keys (KMS, Vault, Turnkey, CDP…); the worker holds none
   */
  transactionProvider: TransactionProviderConfig;
  /** lowercase; the API knows the treasury by address only (TREASURY_ADDRESS) */
  treasuryAddress: string;
  /** lowercase; RELAYER_ADDRESSES, for the API's /x402/supported */
  relayerAddresses: string[];
  feeAmount: bigint;
  /** the service's master key: per-merchant webhook secrets are encrypted with a key derived from it */
  webhookSecret: string;
  /** after a merchant rotates its webhook secret, the old one keeps signing beside the new one this long */
  webhookSecretGraceSeconds: number;
  /** ports a webhook URL may name (WEBHOOK_ALLOWED_PORTS) */
  webhookAllowedPorts: number[];
  apiKeys: string[];
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  /** An authorization must stay valid this long after verify, so that it can still be settled. */
  authorizationExpiryMarginSeconds: number;
  /** How long POST /v1/settle waits for an outcome before answering 202 pending. */
  settleWaitTimeoutMs: number;
  /**
   * /x402/settle: from a request's arrival, the longest it is held for its settlement to sign the transaction
   * that settles it (one that has sent nothing by then is stopped and answered as failed: never pending
   * without a hash), or, for a repeat of a payment whose transaction is signed, for that transaction to be mined.
   */
  settleMaxHoldMs: number;
  /** How long one computation of the public status page (/status.json) is served to every visitor. */
  statusMaxAgeMs: number;
  /** How long an Idempotency-Key is remembered. */
  idempotencyTtlSeconds: number;
  /** Development and tests only: let webhooks reach private addresses. */
  webhookAllowPrivate: boolean;
  /** Delays before webhook attempts 2 to 6. */
  webhookRetryDelaysMs: number[];
  /** how webhook hosts are resolved (c-ares, never the thread pool), at verify and at delivery */
  webhookDns: WebhookDnsConfig;
  worker: WorkerConfig;
  /**
   * per-client limit on the paid path (verify, settle, x402 verify and settle) and the public lookup: on by
   * default (RATE_LIMIT_MAX, 3000 a RATE_LIMIT_WINDOW_MS); undefined only when an operator sets it to 0
   */
  rateLimit?: RateLimit;
  /**
   * per-client limit on the merchant routes (sign-in, signed requests, account reads, CSV export): on by
   * default (MERCHANT_RATE_LIMIT_MAX, 60 a RATE_LIMIT_WINDOW_MS); undefined only when set to 0
   */
  merchantRateLimit?: RateLimit;
  /** Express `trust proxy`: how many proxy hops to trust for the client address (0: none) */
  trustProxyHops: number;
  abuse: AbuseConfig;
  /** ERC-6492 wallet deployments our relayers pay for, per merchant and per factory within a window */
  walletDeployLimits: WalletDeployLimits;
  retention: RetentionConfig;
  /** the x402 bazaar discovery catalog (issue 45) */
  discovery: DiscoveryConfig;
  /** the queue dashboard's basic-auth credentials; the dashboard is off when unset */
  admin?: AdminCredentials;
}

/** What only the API process reads: no private key (it knows the treasury and relayers by address). */
export type ApiConfig = Omit<Config, 'treasury' | 'treasurySigner' | 'relayers' | 'relayerSigners' | 'transactionProvider' | 'worker' | 'webhookRetryDelaysMs'>;
/** What only the worker process reads: the keys, none of the HTTP settings. */
export type WorkerProcessConfig = Omit<
  Config,
  'port' | 'host' | 'apiProcesses' | 'apiKeys' | 'maxBodyBytes' | 'settleWaitTimeoutMs' | 'settleMaxHoldMs' | 'statusMaxAgeMs' | 'idempotencyTtlSeconds' | 'rateLimit' | 'merchantRateLimit' | 'trustProxyHops' | 'admin'
>;
type SharedConfig = Omit<ApiConfig, keyof ApiSection>;
type ApiSection = Pick<
  Config,
  'port' | 'host' | 'apiProcesses' | 'apiKeys' | 'maxBodyBytes' | 'settleWaitTimeoutMs' | 'settleMaxHoldMs' | 'statusMaxAgeMs' | 'idempotencyTtlSeconds' | 'rateLimit' | 'merchantRateLimit' | 'trustProxyHops' | 'admin' | 'treasuryAddress' | 'relayerAddresses'
>;
type WorkerSection = Omit<WorkerProcessConfig, keyof SharedConfig>;

/** Variables both processes use. */
function readShared(reader: EnvReader): SharedConfig {
  const nodeEnv = reader.oneOf('NODE_ENV', NODE_ENVS, 'development');
  const production = nodeEnv === 'production';
  const feeAmount = reader.bigint('FEE_AMOUNT', 10_000n);
  return {
    nodeEnv,
    databaseUrl: reader.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    ...readQueueSettings(reader),
    logLevel: reader.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    networks: readNetworks(reader),
    feeAmount,
    abuse: readAbuse(reader, feeAmount),
    walletDeployLimits: readWalletDeployLimits(reader),
    retention: readRetention(reader),
    discovery: readDiscovery(reader, production),
    webhookSecret: readMasterSecret(reader),
    webhookSecretGraceSeconds: reader.integer('WEBHOOK_SECRET_GRACE_SECONDS', 24 * 60 * 60, 0, 30 * 24 * 60 * 60),
    webhookAllowedPorts: readWebhookPorts(reader),
    authorizationExpiryMarginSeconds: reader.integer('AUTHORIZATION_EXPIRY_MARGIN_SECONDS', 10, 0, 3600),
    webhookAllowPrivate: readWebhookAllowPrivate(reader, production),
    webhookDns: readWebhookDns(reader),
  };
}

/** Variables only the API uses. A private key is read only when no address is given (single-host dev setups). */
function readApiSection(reader: EnvReader): ApiSection {
  const treasuryAddress = readTreasuryAddress(
    reader,
    reader.raw('TREASURY_ADDRESS') === undefined && reader.raw('TREASURY_PRIVATE_KEY') !== undefined
      ? reader.privateKey('TREASURY_PRIVATE_KEY', reader.raw('TREASURY_PRIVATE_KEY')).address
      : undefined,
  );
  const relayerKeys =
    reader.raw('RELAYER_ADDRESSES') === undefined && reader.raw('RELAYER_PRIVATE_KEYS') !== undefined
      ? readRelayers(reader, { privateKey: '', address: treasuryAddress }).map((r) => r.address)
      : undefined;
  return {
    port: reader.integer('PORT', 4020, 0, 65535),
    host: reader.string('HOST', '0.0.0.0'),
    apiProcesses: reader.integer('API_PROCESSES', availableParallelism(), 1, 256),
    apiKeys: reader.list('API_KEYS'),
    maxBodyBytes: reader.integer('MAX_BODY_BYTES', 64 * 1024, 1024, 10 * 1024 * 1024),
    settleWaitTimeoutMs: reader.milliseconds('SETTLE_WAIT_TIMEOUT_MS', 30_000),
    // below @x402/core's facilitator client timeout (90 s by default), with room for the claimed grace
    settleMaxHoldMs: reader.integer('SETTLE_MAX_HOLD_MS', 30_000, 0, 75_000),
    statusMaxAgeMs: reader.integer('STATUS_MAX_AGE_MS', 5_000, 100, 3_600_000),
    idempotencyTtlSeconds: reader.integer('IDEMPOTENCY_TTL_SECONDS', 24 * 60 * 60, 60, 30 * 24 * 60 * 60),
    admin: readAdmin(reader),
    ...readRateLimits(reader),
    trustProxyHops: reader.integer('TRUST_PROXY_HOPS', 0, 0, 10),
    treasuryAddress,
    relayerAddresses: readRelayerAddresses(reader, relayerKeys, treasuryAddress),
  };
}

/** Variables only the worker uses: the keys (checked against the addresses when both are given). */
function readWorkerSection(reader: EnvReader): WorkerSection {
  const worker = readWorker(reader);
  const transactionProvider = readTransactionProvider(reader);
  return {
    ...readWorkerKeys(reader, transactionProvider, worker.settlementMode),
    transactionProvider,
    webhookRetryDelaysMs: reader.millisecondsList('WEBHOOK_RETRY_DELAYS_MS', WEBHOOK_RETRY_DELAYS_MS, 5),
    worker,
  };
}

/** The API process's configuration: reads no private key when TREASURY_ADDRESS is given. */
export function loadApiConfig(env: Env = process.env): ApiConfig {
  const reader = new EnvReader(env);
  return { ...readShared(reader), ...readApiSection(reader) };
}

/** The worker process's configuration. */
export function loadWorkerConfig(env: Env = process.env): WorkerProcessConfig {
  const reader = new EnvReader(env);
  return { ...readShared(reader), ...readWorkerSection(reader) };
}

/** Everything (tools and tests that run both sides in one process). Throws a ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  const reader = new EnvReader(env);
  const worker = readWorkerSection(reader);
  return { ...readShared(reader), ...readApiSection(reader), ...worker };
}

/** For process entry points: the one-line failure the operator sees, then exit 1. */
export function exitOnConfigError<T>(load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
