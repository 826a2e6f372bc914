import { parseUnits } from 'ethers';

/** Anything with winston's leveled methods; nothing is logged when absent. */
export interface TransactionLogger {
  info(message: string, meta?: Record<string, unknown>): unknown;
  warn(message: string, meta?: Record<string, unknown>): unknown;
  error(message: string, meta?: Record<string, unknown>): unknown;
}

/** The durable steps of sending, each written before the next starts. */
export type SendPhase = 'nonce_allocated' | 'attempt_stored' | 'broadcast';

/**
 * Called right after each durable step. A testing seam: throwing from it stops `submit` exactly where a
 * crash would, leaving the database as that crash would.
 */
type SendPhaseHook = (phase: SendPhase, transaction: { id: string; nonce: bigint; hash?: string }) => void | Promise<void>;

export interface LocalKeyTransactionProviderOptions {
  /** How often receipts are polled; default 100 ms (a 1 s block is seen within a tenth of its time). */
  receiptPollIntervalMs?: number;
  /** How often an unmined transaction is handed to the node again, in case it was dropped; default 2 s. */
  rebroadcastIntervalMs?: number;
  /** An unmined transaction this old is signed again with the same nonce and higher fees; default 10 s. */
  replaceAfterMs?: number;
  /** How much a replacement raises both fees; default and minimum 12.5 (nodes refuse less than 10). */
  feeBumpPercent?: number;
  /** The highest max fee per gas ever signed; default 100 gwei. */
  maxFeePerGasCap?: bigint;
  /** How long a reading of the market's fees is reused for new transactions; default 500 ms (0: never). */
  feeCacheMs?: number;
  /** Added to the gas estimate for the gas limit; default 20 (percent). */
  gasLimitMarginPercent?: number;
  /** `waitForOutcome` gives up (retryably) after this long; default 120 s. */
  outcomeTimeoutMs?: number;
  /** `waitForOutcome` rides out RPC failures this long before throwing RpcUnavailableError; default 3 s. */
  rpcOutageToleranceMs?: number;
  /**
   * Where the node has eth_sendRawTransactionSync (detected per network on first use): a call that has not
   * failed within this long is taken as accepted, and its receipt, when it comes, ends the wait for the
   * outcome at once; default 300 ms (a node refuses a bad transaction at once; a hosted one is a round trip away).
   */
  syncAcceptMs?: number;
  /** How long the synchronous call may wait for its receipt before the transaction is watched by polling only; default 30 s. */
  syncTimeoutMs?: number;
  /** Per-network overrides of the fee cap and the replace-after time (MAX_FEE_PER_GAS_GWEI_<id>, REPLACE_AFTER_MS_<id>). */
  perNetwork?: ReadonlyMap<number, NetworkSendingOptions>;
  logger?: TransactionLogger;
  /** Testing seam; see SendPhaseHook. */
  onPhase?: SendPhaseHook;
}

export interface NetworkSendingOptions {
  maxFeePerGasCap?: bigint;
  replaceAfterMs?: number;
}

export type ResolvedSendingOptions = Required<Omit<LocalKeyTransactionProviderOptions, 'onPhase'>> & Pick<LocalKeyTransactionProviderOptions, 'onPhase'>;

/** How long an unmined transaction on `chainId` waits before it is replaced. */
export function replaceAfterMsOn(options: ResolvedSendingOptions, chainId: number): number {
  return options.perNetwork.get(chainId)?.replaceAfterMs ?? options.replaceAfterMs;
}

export const MIN_FEE_BUMP_PERCENT = 12.5;

/** A logger that drops everything: the default of both transaction providers. */
export const SILENT_TRANSACTION_LOGGER: TransactionLogger = { info: () => {}, warn: () => {}, error: () => {} };

/** Defaults both transaction providers share, so that they price, estimate and wait alike. */
export const SHARED_SENDING_DEFAULTS = {
  maxFeePerGasCap: parseUnits('100', 'gwei'),
  feeCacheMs: 500,
  gasLimitMarginPercent: 20,
  receiptPollIntervalMs: 100,
  outcomeTimeoutMs: 120_000,
} as const;

export function resolveSendingOptions(options: LocalKeyTransactionProviderOptions): ResolvedSendingOptions {
  const resolved: ResolvedSendingOptions = {
    receiptPollIntervalMs: options.receiptPollIntervalMs ?? SHARED_SENDING_DEFAULTS.receiptPollIntervalMs,
    rebroadcastIntervalMs: options.rebroadcastIntervalMs ?? 2_000,
    replaceAfterMs: options.replaceAfterMs ?? 10_000,
    feeBumpPercent: options.feeBumpPercent ?? MIN_FEE_BUMP_PERCENT,
    maxFeePerGasCap: options.maxFeePerGasCap ?? SHARED_SENDING_DEFAULTS.maxFeePerGasCap,
    feeCacheMs: options.feeCacheMs ?? SHARED_SENDING_DEFAULTS.feeCacheMs,
    gasLimitMarginPercent: options.gasLimitMarginPercent ?? SHARED_SENDING_DEFAULTS.gasLimitMarginPercent,
    outcomeTimeoutMs: options.outcomeTimeoutMs ?? SHARED_SENDING_DEFAULTS.outcomeTimeoutMs,
    rpcOutageToleranceMs: options.rpcOutageToleranceMs ?? 3_000,
    syncAcceptMs: options.syncAcceptMs ?? 300,
    syncTimeoutMs: options.syncTimeoutMs ?? 30_000,
    perNetwork: options.perNetwork ?? new Map(),
    logger: options.logger ?? SILENT_TRANSACTION_LOGGER,
    onPhase: options.onPhase,
  };
  if (!(resolved.feeBumpPercent >= MIN_FEE_BUMP_PERCENT)) {
    throw new Error(`feeBumpPercent must be at least ${MIN_FEE_BUMP_PERCENT}, got ${resolved.feeBumpPercent}`);
  }
  if (resolved.maxFeePerGasCap <= 0n) throw new Error('maxFeePerGasCap must be positive');
  for (const key of ['receiptPollIntervalMs', 'rebroadcastIntervalMs', 'replaceAfterMs', 'outcomeTimeoutMs'] as const) {
    if (!(resolved[key] > 0)) throw new Error(`${key} must be positive, got ${resolved[key]}`);
  }
  if (!(resolved.feeCacheMs >= 0)) throw new Error(`feeCacheMs must not be negative, got ${resolved.feeCacheMs}`);
  if (!(resolved.gasLimitMarginPercent >= 0)) throw new Error('gasLimitMarginPercent must not be negative');
  return resolved;
}
