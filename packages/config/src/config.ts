import { ALL_QUEUES, isQueueName, type QueueName } from '@facilitator/queue';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { NETWORKS, type GasCaps } from '@facilitator/core';
import { ConfigError } from './config-error';
import { readMasterSecret, readRelayerAddresses, readRelayers, readSignerSpecs, readTreasuryAddress, readWebhookPorts } from './key-addresses';
import { Env, EnvReader } from './parsers';

const LOG_LEVELS = ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] as const;
const NODE_ENVS = ['development', 'production', 'test'] as const;

export interface NetworkConfig {
  chainId: number;
  caip2: string;
  legacyName: string;
  /** the first of `rpcUrls` */
  rpcUrl: string;
  /** RPC_URL_<chainId>, comma-separated: reads fail over in this order, transactions go to all of them */
  rpcUrls: string[];
  /** a call an RPC endpoint has not answered within this fails over to the next (RPC_TIMEOUT_MS) */
  rpcTimeoutMs: number;
  /** lowercase; the only factories an ERC-6492 signature may deploy a payer wallet through (WALLET_FACTORIES_<chainId>) */
  walletFactories: string[];
  /** lowercase; the only wallet implementations (Safe singletons, Coinbase Smart Wallet) a factory may deploy for us (WALLET_IMPLEMENTATIONS_<chainId>) */
  walletImplementations: string[];
  /** lowercase */
  tokenAddress: string;
  /** When unset, read once from the token's name()/version() and cached. */
  eip712Name?: string;
  eip712Version?: string;
  confirmations: number;
  /** gas ceilings per transaction kind, checked before anything is sent (GAS_CAP_*_<chainId>) */
  gasCaps: GasCaps;
  /** the highest max fee per gas ever signed on this network (MAX_FEE_PER_GAS_GWEI_<chainId>), in wei */
  maxFeePerGas: bigint;
  /** an unmined transaction this old is replaced with higher fees (REPLACE_AFTER_MS_<chainId>) */
  replaceAfterMs: number;
  /** a relayer whose native balance is below this (wei) is skipped and reported dry (RELAYER_MIN_BALANCE_<chainId>) */
  relayerMinBalance: bigint;
  /** a settled transaction is watched for reorgs until its block is this deep (FINALITY_DEPTH_<chainId>) */
  finalityDepth: number;
  /** the most gas the items of one atomic settle transaction may be given together (BATCH_GAS_BUDGET_<chainId>) */
  batchGasBudget: bigint;
}

/** Abuse limits of the public verify and settle endpoints (see docs/decisions.md, "Abuse"). */
interface AbuseConfig {
  /** payments below this value fail verification (MIN_PAYMENT_AMOUNT, else FEE_AMOUNT; 0n: no minimum) */
  minPaymentAmount: bigint;
  /**
   * MIN_PAYMENT_AMOUNT as set, undefined when unset: the worker's minimum before the fee is then the
   * settlement's own fee, never its own FEE_AMOUNT (a settlement owns its fee, docs/decisions.md)
   */
  configuredMinPaymentAmount?: bigint;
  /** a payment whose fee transfer reverted may be settled again only this long after (doubling per revert) */
  feeRevertBackoffMs: number;
  /**
   * Settlements charged no fee (upto amounts below the fee) created per rolling hour: per merchant
   * (FEE_FREE_SETTLEMENTS_PER_MERCHANT_PER_HOUR) and in all (FEE_FREE_SETTLEMENTS_PER_HOUR); beyond either a
   * settle is refused (429) before anything is stored: the treasury pays their gas and earns nothing
   */
  feeFreeSettlements: { perMerchant: number; total: number };
  /** this many fee reverts for one merchant within `merchantPauseWindowMs` pause its settlements */
  merchantPauseAfterReverts: number;
  merchantPauseWindowMs: number;
  /** concurrent settle waits per API process; beyond it settle answers pending at once */
  maxSettleWaiters: number;
  /**
   * Failure accounting (slice "accounting", docs/decisions.md): this many failures on chain caused by one
   * payer's payments within `failurePauseWindowMs` pause that payer (PAYER_PAUSE_AFTER_FAILURES)
   */
  payerPauseAfterFailures: number;
  /** this many such failures of payments to one merchant pause it for payers that never paid it (MERCHANT_PAUSE_AFTER_FAILURES) */
  merchantPauseAfterFailures: number;
  /** FAILURE_PAUSE_WINDOW_MS: the window the failures are counted in, and the pause's length after the last one */
  failurePauseWindowMs: number;
  /** CONTRACT_PAYER_MAX_IN_FLIGHT: a contract-wallet payer's settlements sending money at once (more wait their turn) */
  contractPayerMaxInFlight: number;
  /**
   * SEQUENTIAL_CONTRACT_PAYERS: `refuse` (default) fails a contract-wallet payer's settlement that would take the
   * sequential path, before its fee (its code could fail the transfer after the fee); `allow` settles it anyway
   */
  sequentialContractPayers: (typeof SEQUENTIAL_CONTRACT_PAYER_POLICIES)[number];
}

interface WalletDeployLimits {
  /** WALLET_DEPLOYS_PER_MERCHANT */
  perMerchant: number;
  /** WALLET_DEPLOYS_PER_FACTORY */
  perFactory: number;
  /** WALLET_PROBE_FAILURES_PER_WALLET: failed deploy-then-transfer probes of one wallet before it is probed no more */
  failedProbesPerWallet: number;
  /** WALLET_DEPLOY_WINDOW_MS */
  windowMs: number;
}

const SEQUENTIAL_CONTRACT_PAYER_POLICIES = ['refuse', 'allow'] as const;

/** The x402 `bazaar` discovery catalog (issue 45). */
export interface DiscoveryConfig {
  /** a resource not paid for this long leaves the catalog (DISCOVERY_RETENTION_DAYS) */
  retentionMs: number;
  /** new resources beyond this many per payTo are not stored (DISCOVERY_MAX_RESOURCES_PER_PAYTO) */
  maxResourcesPerPayTo: number;
  /** the largest declaration read, in bytes of JSON (DISCOVERY_MAX_DECLARATION_BYTES) */
  maxDeclarationBytes: number;
  /** development and tests only: resource URLs on private or local hosts are listed (DISCOVERY_ALLOW_PRIVATE_URLS) */
  allowPrivateUrls: boolean;
}

export interface RetentionConfig {
  /** rejected verifications older than this are deleted */
  rejectedVerificationsMs: number;
  /** idempotency keys are deleted this long after they expire */
  expiredIdempotencyKeysMs: number;
  /** how often the retention job runs (once across the cluster) */
  intervalMs: number;
  /** a verified verification no settlement refers to is deleted this long after its authorization's validBefore */
  expiredVerificationsMs: number;
  /** ...and this long after it was made even if its authorization is still valid (a settle then asks for a new verify) */
  unsettledVerificationsMs: number;
  /** a failed settlement that moved no money is deleted (with its history, events and batch item) this long after it failed */
  failedSettlementsMs: number;
  /** a merchant with no settlement, settle key or minimum, unseen this long, is deleted with its webhook secrets */
  unusedMerchantsMs: number;
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
  /** QUEUE_BACKEND: where BullMQ keeps the queues, Redis (default) or the service's own Postgres (DATABASE_URL) */
  queueBackend: (typeof QUEUE_BACKENDS)[number];
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
  rateLimit?: { max: number; windowMs: number };
  /**
   * per-client limit on the merchant routes (sign-in, signed requests, account reads, CSV export): on by
   * default (MERCHANT_RATE_LIMIT_MAX, 60 a RATE_LIMIT_WINDOW_MS); undefined only when set to 0
   */
  merchantRateLimit?: { max: number; windowMs: number };
  /** Express `trust proxy`: how many proxy hops to trust for the client address (0: none) */
  trustProxyHops: number;
  abuse: AbuseConfig;
  /** ERC-6492 wallet deployments our relayers pay for, per merchant and per factory within a window */
  walletDeployLimits: WalletDeployLimits;
  retention: RetentionConfig;
  /** the x402 bazaar discovery catalog (issue 45) */
  discovery: DiscoveryConfig;
  /** the queue dashboard's basic-auth credentials; the dashboard is off when unset */
  admin?: { username: string; password: string };
}

interface WebhookDnsConfig {
  /** WEBHOOK_DNS_SERVERS: `ip` or `ip:port`; empty: the system's (resolv.conf) */
  servers: string[];
  /** WEBHOOK_DNS_TIMEOUT_MS: one query's timeout */
  timeoutMs: number;
  /** WEBHOOK_DNS_TRIES: tries per server */
  tries: number;
  /** WEBHOOK_DNS_MAX_IN_FLIGHT: host lookups at once per process; more fail at once as busy */
  maxInFlight: number;
}

interface WorkerConfig {
  /** which queues this worker process serves (WORKER_QUEUES); default both */
  queues: QueueName[];
  settlementConcurrency: number;
  webhookConcurrency: number;
  /** WEBHOOK_RECEIVER_CONCURRENCY: deliveries in flight to one receiver (origin host:port) per worker process */
  webhookReceiverConcurrency: number;
  /** WEBHOOK_BREAKER_FAILURES: consecutive failed attempts to one receiver that open its circuit breaker */
  webhookBreakerFailures: number;
  /** WEBHOOK_BREAKER_COOLDOWN_MS: how long an open breaker holds deliveries before a probe (doubling per failed probe) */
  webhookBreakerCooldownMs: number;
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
  /** how often settled transactions are checked for reorgs until final (FINALITY_POLL_MS) */
  finalityPollMs: number;
  /** attempts of a settlement job whose step keeps failing transiently, before it is parked for an operator */
  settlementAttempts: number;
  /**
   * SETTLEMENT_IN_SLOT_WAIT_MS: how long a settlement job waits in its slot for a sent transaction's outcome
   * before it gives the slot up until the outcome is known (no job holds a slot while it waits for a block)
   */
  settlementInSlotWaitMs: number;
  /**
   * SETTLEMENT_CHAIN_RECHECK_MS: the longest a job that gave up its slot stays delayed; the fallback when the
   * process waiting for its transaction dies (it is otherwise run again as soon as the outcome is known)
   */
  settlementChainRecheckMs: number;
  /**
   * SETTLEMENT_MODE: `atomic` (default) collects the fee and executes the transfer in one transaction of the
   * settlement executor where the treasury's delegation is in place; `sequential` always sends two
   */
  settlementMode: (typeof SETTLEMENT_MODES)[number];
  /**
   * BATCH_WINDOW_MS: how long the first ready settlement waits for others to share its transaction (0: none;
   * under load, settlements that become ready while one batch is being sent share the next anyway)
   */
  batchWindowMs: number;
  /**
   * EXECUTOR_RECHECK_MS: how often the treasury's delegation is read again, so that an `executor setup` done
   * later (or a delegation removed) takes effect without a restart
   */
  executorRecheckMs: number;
}

const SETTLEMENT_MODES = ['atomic', 'sequential'] as const;
const TRANSACTION_PROVIDERS = ['local', 'openzeppelin-relayer'] as const;

export type TransactionProviderConfig =
  | { kind: 'local' }
  | {
      kind: 'openzeppelin-relayer';
      /** OZ_RELAYER_URL: the relayer server's origin */
      url: string;
      /** OZ_RELAYER_API_KEY */
      apiKey: string;
      /** OZ_RELAYER_IDS_<chainId>: the relayer ids that send on each enabled network (their addresses are read at start-up) */
      relayerIds: ReadonlyMap<number, string[]>;
      /**
       * OZ_RELAYER_ALLOW_TREASURY (default false): the operator accepts that the relayer server signs as the
       * treasury, which makes OZ_RELAYER_API_KEY a credential that can move every merchant's allowance; without
       * it the worker refuses to start when any relayer the key reaches is the treasury
       */
      allowTreasury: boolean;
    };
/** the executor's relayer slots (SettlementExecutor.sol, MAX_RELAYERS) */
export const EXECUTOR_MAX_RELAYERS = 8;

/** The spec's schedule: attempt 1 at once, then after 1 min, 5 min, 15 min, 30 min and 1 h. */
export const WEBHOOK_RETRY_DELAYS_MS = [60_000, 300_000, 900_000, 1_800_000, 3_600_000] as const;

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const QUEUE_BACKENDS = ['redis', 'postgres'] as const;

/**
 * Canonical Safe 1.4.1 SafeProxyFactory and Coinbase Smart Wallet factory (same address on every chain):
 * the ERC-6492 factories used unless WALLET_FACTORIES_<chainId> says otherwise (docs/decisions.md).
 */
const DEFAULT_WALLET_FACTORIES = ['0x4e1dcf7ad4e460cfd30791ccc4f9c8a4f820ec67', '0x0ba5ed0c6aa8c49038f819e587e2633c4a9f428a'] as const;
/**
 * Safe 1.4.1 `Safe` and `SafeL2` singletons and the Coinbase Smart Wallet v1 implementation, at their canonical
 * addresses: the wallets an ERC-6492 deployment may create unless WALLET_IMPLEMENTATIONS_<chainId> says otherwise.
 */
const DEFAULT_WALLET_IMPLEMENTATIONS = [
  '0x41675c099f32341bf84bfc5382af534df5c7461a',
  '0x29fcb43b46531bca003ddc8fcb67ffe91900c762',
  '0x000100abaad02f1cfc8bbe32bd5a564817339e72',
] as const;
const DAY_MS = 24 * 60 * 60 * 1000;

function readAbuse(reader: EnvReader, feeAmount: bigint): AbuseConfig {
  const configuredMinPaymentAmount = reader.raw('MIN_PAYMENT_AMOUNT') === undefined ? undefined : reader.bigint('MIN_PAYMENT_AMOUNT', 0n);
  return {
    minPaymentAmount: configuredMinPaymentAmount ?? feeAmount,
    configuredMinPaymentAmount,
    feeRevertBackoffMs: reader.integer('FEE_REVERT_BACKOFF_MS', 60_000, 0, DAY_MS),
    feeFreeSettlements: {
      perMerchant: reader.integer('FEE_FREE_SETTLEMENTS_PER_MERCHANT_PER_HOUR', 60, 0, 1_000_000),
      total: reader.integer('FEE_FREE_SETTLEMENTS_PER_HOUR', 1_000, 0, 10_000_000),
    },
    merchantPauseAfterReverts: reader.integer('MERCHANT_PAUSE_AFTER_REVERTS', 3, 1, 1000),
    merchantPauseWindowMs: reader.integer('MERCHANT_PAUSE_WINDOW_MS', 10 * 60_000, 1_000, DAY_MS),
    maxSettleWaiters: reader.integer('SETTLE_MAX_WAITERS', 2_000, 0, 1_000_000),
    payerPauseAfterFailures: reader.integer('PAYER_PAUSE_AFTER_FAILURES', 3, 1, 1000),
    merchantPauseAfterFailures: reader.integer('MERCHANT_PAUSE_AFTER_FAILURES', 10, 1, 100_000),
    failurePauseWindowMs: reader.integer('FAILURE_PAUSE_WINDOW_MS', 60 * 60_000, 1_000, DAY_MS),
    contractPayerMaxInFlight: reader.integer('CONTRACT_PAYER_MAX_IN_FLIGHT', 1, 1, 1000),
    sequentialContractPayers: reader.oneOf('SEQUENTIAL_CONTRACT_PAYERS', SEQUENTIAL_CONTRACT_PAYER_POLICIES, 'refuse'),
  };
}

function readRetention(reader: EnvReader): RetentionConfig {
  return {
    rejectedVerificationsMs: reader.integer('RETENTION_REJECTED_VERIFICATIONS_DAYS', 30, 1, 3650) * DAY_MS,
    expiredIdempotencyKeysMs: reader.integer('RETENTION_EXPIRED_IDEMPOTENCY_HOURS', 24, 0, 24 * 365) * 60 * 60 * 1000,
    intervalMs: reader.integer('RETENTION_INTERVAL_MS', 60 * 60 * 1000, 1_000, DAY_MS),
    expiredVerificationsMs: reader.integer('RETENTION_EXPIRED_VERIFICATIONS_HOURS', 24, 0, 24 * 365) * 60 * 60 * 1000,
    unsettledVerificationsMs: reader.integer('RETENTION_UNSETTLED_VERIFICATIONS_DAYS', 30, 1, 3650) * DAY_MS,
    failedSettlementsMs: reader.integer('RETENTION_FAILED_SETTLEMENTS_DAYS', 90, 1, 3650) * DAY_MS,
    unusedMerchantsMs: reader.integer('RETENTION_UNUSED_MERCHANTS_DAYS', 90, 1, 3650) * DAY_MS,
  };
}

function readNetworks(reader: EnvReader): NetworkConfig[] {
  const enabled: NetworkConfig[] = [];
  for (const network of NETWORKS) {
    const id = network.chainId;
    const rpcUrls = readRpcUrls(reader, `RPC_URL_${id}`);
    if (rpcUrls.length === 0) continue;
    enabled.push({
      chainId: id,
      caip2: network.caip2,
      legacyName: network.legacyName,
      rpcUrl: rpcUrls[0],
      rpcUrls,
      rpcTimeoutMs: reader.integer('RPC_TIMEOUT_MS', 3_000, 100, 60_000),
      walletFactories: readAddressList(reader, `WALLET_FACTORIES_${id}`, DEFAULT_WALLET_FACTORIES),
      walletImplementations: readAddressList(reader, `WALLET_IMPLEMENTATIONS_${id}`, DEFAULT_WALLET_IMPLEMENTATIONS),
      tokenAddress: reader.address(`TOKEN_ADDRESS_${id}`, network.usdc.address),
      eip712Name: reader.optionalString(`TOKEN_EIP712_NAME_${id}`),
      eip712Version: reader.optionalString(`TOKEN_EIP712_VERSION_${id}`),
      confirmations: reader.integer(`CONFIRMATIONS_${id}`, 1, 1, 100),
      gasCaps: {
        fee: reader.bigint(`GAS_CAP_FEE_${id}`, network.gasCaps.fee),
        transfer: reader.bigint(`GAS_CAP_TRANSFER_${id}`, network.gasCaps.transfer),
        contractTransfer: reader.bigint(`GAS_CAP_CONTRACT_TRANSFER_${id}`, network.gasCaps.contractTransfer),
        walletDeploy: reader.bigint(`GAS_CAP_WALLET_DEPLOY_${id}`, network.gasCaps.walletDeploy),
      },
      maxFeePerGas: BigInt(reader.integer(`MAX_FEE_PER_GAS_GWEI_${id}`, network.maxFeePerGasGwei, 1, 100_000)) * 1_000_000_000n,
      replaceAfterMs: reader.integer(`REPLACE_AFTER_MS_${id}`, 10_000, 1_000, 600_000),
      relayerMinBalance: reader.bigint(`RELAYER_MIN_BALANCE_${id}`, network.relayerMinBalance),
      finalityDepth: reader.integer(`FINALITY_DEPTH_${id}`, network.finalityDepth, 1, 10_000),
      batchGasBudget: reader.bigint(`BATCH_GAS_BUDGET_${id}`, network.batchGasBudget),
    });
  }
  if (enabled.length === 0) {
    throw new ConfigError(
      'RPC_URL_<chainId>',
      `must be set for at least one network (a network is enabled only when its RPC URL is set; chain ids: ${NETWORKS.map((n) => n.chainId).join(', ')})`,
    );
  }
  return enabled;
}

/** Every entry of a comma-separated URL list must be an http(s) URL; the error never quotes one (they carry keys). */
function readRpcUrls(reader: EnvReader, name: string): string[] {
  const urls = reader.list(name);
  urls.forEach((url, index) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) throw new ConfigError(name, `must be a http or https URL (entry ${index + 1})`);
  });
  if (new Set(urls).size !== urls.length) throw new ConfigError(name, 'lists the same URL twice');
  return urls;
}

/** A comma-separated list of addresses, lowercase; `fallback` when unset. */
function readAddressList(reader: EnvReader, name: string, fallback: readonly string[]): string[] {
  if (reader.raw(name) === undefined) return [...fallback];
  return reader.list(name).map((item, index) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(item)) throw new ConfigError(name, `entry ${index + 1} must be a 20-byte 0x-prefixed hex address`);
    return item.toLowerCase();
  });
}

function readDiscovery(reader: EnvReader, nodeEnv: Config['nodeEnv']): DiscoveryConfig {
  const allowPrivateUrls = reader.boolean('DISCOVERY_ALLOW_PRIVATE_URLS', false);
  if (allowPrivateUrls && nodeEnv === 'production') throw new ConfigError('DISCOVERY_ALLOW_PRIVATE_URLS', 'must not be true in production');
  return {
    retentionMs: reader.integer('DISCOVERY_RETENTION_DAYS', 30, 1, 3650) * DAY_MS,
    maxResourcesPerPayTo: reader.integer('DISCOVERY_MAX_RESOURCES_PER_PAYTO', 200, 1, 100_000),
    maxDeclarationBytes: reader.integer('DISCOVERY_MAX_DECLARATION_BYTES', 16 * 1024, 512, 64 * 1024),
    allowPrivateUrls,
  };
}

function readWebhookAllowPrivate(reader: EnvReader, nodeEnv: Config['nodeEnv']): boolean {
  const allow = reader.boolean('WEBHOOK_ALLOW_PRIVATE', false);
  if (allow && nodeEnv === 'production') throw new ConfigError('WEBHOOK_ALLOW_PRIVATE', 'must not be true in production');
  return allow;
}

function readWorker(reader: EnvReader): WorkerConfig {
  const queues = reader.list('WORKER_QUEUES');
  const unknown = queues.find((q) => !isQueueName(q));
  if (unknown !== undefined) throw new ConfigError('WORKER_QUEUES', `names an unknown queue "${unknown}" (known: ${ALL_QUEUES.join(', ')})`);
  const webhookConcurrency = reader.integer('WEBHOOK_CONCURRENCY', 20, 1, 1000);
  return {
    queues: queues.length > 0 ? queues.filter(isQueueName) : [...ALL_QUEUES],
    settlementConcurrency: reader.integer('SETTLEMENT_CONCURRENCY', 200, 1, 1000),
    webhookConcurrency,
    // at most the delivery slots: a cap equal to them is no cap, so it is allowed only when there is one slot
    webhookReceiverConcurrency: reader.integer('WEBHOOK_RECEIVER_CONCURRENCY', Math.min(4, webhookConcurrency), 1, webhookConcurrency),
    webhookBreakerFailures: reader.integer('WEBHOOK_BREAKER_FAILURES', 5, 1, 1000),
    webhookBreakerCooldownMs: reader.integer('WEBHOOK_BREAKER_COOLDOWN_MS', 30_000, 100, 3_600_000),
    lockDurationMs: reader.integer('WORKER_LOCK_DURATION_MS', 15_000, 1_000, 600_000),
    stalledIntervalMs: reader.integer('WORKER_STALLED_INTERVAL_MS', 5_000, 500, 600_000),
    shutdownTimeoutMs: reader.integer('WORKER_SHUTDOWN_TIMEOUT_MS', 25_000, 0, 600_000),
    metricsPort: reader.integer('WORKER_METRICS_PORT', 0, 0, 65535),
    sweepIntervalMs: reader.integer('SWEEP_INTERVAL_MS', 30_000, 100, 3_600_000),
    sweepStaleAfterMs: reader.integer('SWEEP_STALE_AFTER_MS', 60_000, 100, 86_400_000),
    finalityPollMs: reader.integer('FINALITY_POLL_MS', 2_000, 100, 600_000),
    settlementAttempts: reader.integer('SETTLEMENT_MAX_ATTEMPTS', 12, 1, 1000),
    settlementInSlotWaitMs: reader.integer('SETTLEMENT_IN_SLOT_WAIT_MS', 250, 0, 60_000),
    settlementChainRecheckMs: reader.integer('SETTLEMENT_CHAIN_RECHECK_MS', 30_000, 100, 600_000),
    settlementMode: reader.oneOf('SETTLEMENT_MODE', SETTLEMENT_MODES, 'atomic'),
    batchWindowMs: reader.integer('BATCH_WINDOW_MS', 0, 0, 10_000),
    executorRecheckMs: reader.integer('EXECUTOR_RECHECK_MS', 60_000, 1_000, 3_600_000),
  };
}

function readClusterNodes(reader: EnvReader): Config['redisClusterNodes'] {
  return reader.list('REDIS_CLUSTER_NODES').map((item) => {
    const match = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):([0-9]{1,5})$/.exec(item);
    if (!match || Number(match[2]) > 65535) throw new ConfigError('REDIS_CLUSTER_NODES', `entry "${item}" must be host:port`);
    return { host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) };
  });
}

function readQueueBackend(reader: EnvReader, clusterNodes: Config['redisClusterNodes']): Config['queueBackend'] {
  const backend = reader.oneOf('QUEUE_BACKEND', QUEUE_BACKENDS, 'redis');
  if (backend === 'postgres' && clusterNodes.length > 0) throw new ConfigError('REDIS_CLUSTER_NODES', 'must be unset with QUEUE_BACKEND=postgres (no Redis is used)');
  return backend;
}

/**
 * What strangers can make us store and compute is bounded by more than time (issue 40, 7d): both limits are
 * on by default, counted in Redis across API processes (per process with QUEUE_BACKEND=postgres). The
 * defaults leave a busy merchant server room (3000 paid-path calls a minute is 25 paid requests a second from
 * one address, verify and settle each) and a merchant at its page more than it needs; an operator raises
 * them, or sets 0 to leave limiting to a proxy in front.
 */
function readRateLimits(reader: EnvReader): Pick<Config, 'rateLimit' | 'merchantRateLimit'> {
  const windowMs = reader.integer('RATE_LIMIT_WINDOW_MS', 60_000, 1_000, 3_600_000);
  const max = reader.integer('RATE_LIMIT_MAX', 3_000, 0, 100_000_000);
  const merchantMax = reader.integer('MERCHANT_RATE_LIMIT_MAX', 60, 0, 100_000_000);
  return {
    rateLimit: max > 0 ? { max, windowMs } : undefined,
    merchantRateLimit: merchantMax > 0 ? { max: merchantMax, windowMs } : undefined,
  };
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

function readPrefix(reader: EnvReader, clusterNodes: Config['redisClusterNodes']): string {
  const queuePrefix = reader.string('QUEUE_PREFIX', 'x402');
  if (!/^[A-Za-z0-9_.{}-]{1,64}$/.test(queuePrefix)) {
    throw new ConfigError('QUEUE_PREFIX', 'may only contain letters, digits, "_", ".", "-", "{" and "}" (at most 64)');
  }
  return clusterNodes.length > 0 && !queuePrefix.includes('{') ? `{${queuePrefix}}` : queuePrefix;
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
  const clusterNodes = readClusterNodes(reader);
  const feeAmount = reader.bigint('FEE_AMOUNT', 10_000n);
  return {
    nodeEnv,
    databaseUrl: reader.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: reader.url('REDIS_URL', ['redis:', 'rediss:'], DEFAULT_REDIS_URL),
    redisClusterNodes: clusterNodes,
    queueBackend: readQueueBackend(reader, clusterNodes),
    queuePrefix: readPrefix(reader, clusterNodes),
    logLevel: reader.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    networks: readNetworks(reader),
    feeAmount,
    abuse: readAbuse(reader, feeAmount),
    walletDeployLimits: {
      perMerchant: reader.integer('WALLET_DEPLOYS_PER_MERCHANT', 5, 0, 1_000_000),
      perFactory: reader.integer('WALLET_DEPLOYS_PER_FACTORY', 50, 0, 1_000_000),
      failedProbesPerWallet: reader.integer('WALLET_PROBE_FAILURES_PER_WALLET', 2, 0, 1_000_000),
      windowMs: reader.integer('WALLET_DEPLOY_WINDOW_MS', 60 * 60_000, 1_000, 30 * DAY_MS),
    },
    retention: readRetention(reader),
    discovery: readDiscovery(reader, nodeEnv),
    webhookSecret: readMasterSecret(reader),
    webhookSecretGraceSeconds: reader.integer('WEBHOOK_SECRET_GRACE_SECONDS', 24 * 60 * 60, 0, 30 * 24 * 60 * 60),
    webhookAllowedPorts: readWebhookPorts(reader),
    authorizationExpiryMarginSeconds: reader.integer('AUTHORIZATION_EXPIRY_MARGIN_SECONDS', 10, 0, 3600),
    webhookAllowPrivate: readWebhookAllowPrivate(reader, nodeEnv),
    webhookDns: readWebhookDns(reader),
  };
}

/** WEBHOOK_DNS_*: the webhook hosts' resolver. */
function readWebhookDns(reader: EnvReader): WebhookDnsConfig {
  const servers = reader.list('WEBHOOK_DNS_SERVERS').map((item) => {
    // node:dns setServers' forms: `1.2.3.4`, `1.2.3.4:53`, `::1`, `[::1]:53`
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(item);
    const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(item);
    const [address, port] = bracketed ? [bracketed[1], bracketed[2]] : v4 ? [v4[1], v4[2]] : [item, undefined];
    const family = isIP(address);
    const ok = (bracketed ? family === 6 : v4 ? family === 4 : family === 6) && (port === undefined || (Number(port) >= 1 && Number(port) <= 65535));
    if (!ok) throw new ConfigError('WEBHOOK_DNS_SERVERS', `entry "${item}" must be an IP address, optionally with :port`);
    return item;
  });
  return {
    servers,
    timeoutMs: reader.integer('WEBHOOK_DNS_TIMEOUT_MS', 2_000, 50, 30_000),
    tries: reader.integer('WEBHOOK_DNS_TRIES', 2, 1, 5),
    maxInFlight: reader.integer('WEBHOOK_DNS_MAX_IN_FLIGHT', 64, 1, 10_000),
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

/** TRANSACTION_PROVIDER and, for the OpenZeppelin Relayer, where it is and which of its relayers send on each network. */
function readTransactionProvider(reader: EnvReader): TransactionProviderConfig {
  const kind = reader.oneOf('TRANSACTION_PROVIDER', TRANSACTION_PROVIDERS, 'local');
  if (kind === 'local') return { kind };
  const url = reader.url('OZ_RELAYER_URL', ['http:', 'https:']);
  const apiKey = reader.string('OZ_RELAYER_API_KEY');
  const relayerIds = new Map<number, string[]>();
  for (const network of readNetworks(reader)) {
    const ids = reader.list(`OZ_RELAYER_IDS_${network.chainId}`);
    if (ids.length === 0) throw new ConfigError(`OZ_RELAYER_IDS_${network.chainId}`, 'is required with TRANSACTION_PROVIDER=openzeppelin-relayer (the relayer ids that send on this network)');
    relayerIds.set(network.chainId, ids);
  }
  return { kind, url, apiKey, relayerIds, allowTreasury: reader.boolean('OZ_RELAYER_ALLOW_TREASURY', false) };
}

/** Variables only the worker uses: the keys (checked against the addresses when both are given). */
function readWorkerSection(reader: EnvReader): WorkerSection {
  const worker = readWorker(reader);
  const transactionProvider = readTransactionProvider(reader);
  const keys = transactionProvider.kind === 'openzeppelin-relayer' ? readNoKeys(reader) : readLocalKeys(reader, worker);
  return {
    ...keys,
    transactionProvider,
    webhookRetryDelaysMs: reader.millisecondsList('WEBHOOK_RETRY_DELAYS_MS', WEBHOOK_RETRY_DELAYS_MS, 5),
    worker,
  };
}

type WorkerKeysSection = Pick<WorkerSection, 'treasury' | 'treasurySigner' | 'relayers' | 'relayerSigners' | 'treasuryAddress' | 'relayerAddresses'>;

/**
 * TRANSACTION_PROVIDER=openzeppelin-relayer: the relayer server holds every key (a key here as well would
 * sign from an address the relayer also uses); the worker checks at start-up that the treasury's relayer is
 * among them where the sequential path needs it.
 */
function readNoKeys(reader: EnvReader): WorkerKeysSection {
  for (const name of ['TREASURY_PRIVATE_KEY', 'TREASURY_SIGNER', 'RELAYER_PRIVATE_KEYS', 'RELAYER_SIGNERS'] as const) {
    if (reader.raw(name) !== undefined) throw new ConfigError(name, 'must be unset with TRANSACTION_PROVIDER=openzeppelin-relayer (the relayer server holds the keys)');
  }
  return { treasury: undefined, treasurySigner: undefined, relayers: [], relayerSigners: [], treasuryAddress: readTreasuryAddress(reader, undefined), relayerAddresses: [] };
}

/** The keys this worker signs with: local keys and signer specs. */
function readLocalKeys(reader: EnvReader, worker: WorkerConfig): WorkerKeysSection {
  // the treasury key is the one that can take every merchant's whole allowance: read only when given, and
  // needed only where the treasury itself sends (the sequential path)
  const treasury = reader.raw('TREASURY_PRIVATE_KEY') === undefined ? undefined : reader.privateKey('TREASURY_PRIVATE_KEY', reader.raw('TREASURY_PRIVATE_KEY'));
  const treasurySigner = readSignerSpecs(reader, 'TREASURY_SIGNER')[0];
  if (treasury && treasurySigner) throw new ConfigError('TREASURY_SIGNER', 'and TREASURY_PRIVATE_KEY name the same key twice: set one');
  if (!treasury && !treasurySigner && worker.settlementMode === 'sequential') {
    throw new ConfigError('TREASURY_PRIVATE_KEY', 'is required with SETTLEMENT_MODE=sequential (the treasury sends each fee itself); SETTLEMENT_MODE=atomic needs no treasury key in the worker');
  }
  const relayerSigners = readSignerSpecs(reader, 'RELAYER_SIGNERS');
  const relayers = relayerSigners.length > 0 && reader.list('RELAYER_PRIVATE_KEYS').length === 0 ? [] : readRelayers(reader, treasury);
  const treasuryAddress = readTreasuryAddress(reader, treasury?.address);
  const relayerCount = relayers.length + relayerSigners.length;
  if (worker.settlementMode === 'atomic' && relayerCount > EXECUTOR_MAX_RELAYERS) {
    throw new ConfigError('RELAYER_PRIVATE_KEYS', `and RELAYER_SIGNERS name ${relayerCount} keys; the settlement executor admits ${EXECUTOR_MAX_RELAYERS} (or set SETTLEMENT_MODE=sequential)`);
  }
  return {
    treasury,
    treasurySigner,
    relayers,
    relayerSigners,
    treasuryAddress,
    // a signer's address is known only once the worker opens it: RELAYER_ADDRESSES is not compared with it (the API's own setting)
    relayerAddresses: relayerSigners.length > 0 ? relayers.map((r) => r.address) : readRelayerAddresses(reader, relayers.map((r) => r.address), treasuryAddress),
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
