import { SHARED_SENDING_DEFAULTS, SILENT_TRANSACTION_LOGGER, type TransactionLogger } from '@facilitator/evm-sending';
import type { RelayerSpeed } from './api/relayer-api-types';

/** The durable steps of a send, each stored before the next starts. */
export type RelayerSendPhase = 'stored' | 'requested' | 'accepted';

/**
 * Called right after each step. A testing seam: throwing from it stops `submit` where a crash would
 * (`accepted`: the relayer took the transaction, its id not yet stored, as when the answer is lost).
 */
type RelayerSendPhaseHook = (phase: RelayerSendPhase, transaction: { id: string; relayerTransactionId?: string }) => void | Promise<void>;

export interface OpenZeppelinRelayerProviderOptions {
  /** Price by the relayer's own speed instead of explicit EIP-1559 fees read from our node under our cap. */
  speed?: RelayerSpeed;
  /** The highest max fee per gas asked for (as MAX_FEE_PER_GAS_GWEI_<id>); default 100 gwei. Set the relayer's `gas_price_cap` policy to match: it prices its replacements. */
  maxFeePerGasCap?: bigint;
  /** Per-network caps. */
  perNetworkMaxFeePerGasCap?: ReadonlyMap<number, bigint>;
  /** How long a reading of the network's fees is shared; default 500 ms. */
  feeCacheMs?: number;
  /** Added to our gas estimate for the gas limit sent; default 20 (percent). */
  gasLimitMarginPercent?: number;
  /** How often the relayer is asked about a transaction being waited for (a signed webhook wakes earlier); default 1 s. */
  statusPollIntervalMs?: number;
  /** How often our node's head is read for receipts; default 100 ms. */
  receiptPollIntervalMs?: number;
  /** `submit` waits this long for the relayer to sign (a hash) before throwing, retryably; default 30 s. */
  signWaitMs?: number;
  /** `waitForOutcome` gives up (retryably) after this long; default 120 s. */
  outcomeTimeoutMs?: number;
  /**
   * After the relayer reports a transaction ended (failed, expired, canceled) while our node shows no
   * receipt, how long our node is given to catch up before the failure is believed; default 5 s.
   */
  finalGraceMs?: number;
  /**
   * A request whose answer was lost may still be acted on by the relayer until its own handler timeout
   * (REQUEST_TIMEOUT_SECONDS, 30 s by default) has passed: reconciliation waits this long after the
   * request began before concluding from the relayer's list; default the client's timeout plus 35 s.
   */
  reconcileAfterMs?: number;
  /** How far before our row's creation (by our database's clock) the relayer's clock may be; default 5 min. */
  clockSkewToleranceMs?: number;
  /** Transactions read per page when reconciling; default 50. */
  reconcilePageSize?: number;
  logger?: TransactionLogger;
  onPhase?: RelayerSendPhaseHook;
}

export type ResolvedRelayerProviderOptions = Required<Omit<OpenZeppelinRelayerProviderOptions, 'onPhase' | 'speed'>> &
  Pick<OpenZeppelinRelayerProviderOptions, 'onPhase' | 'speed'>;

export function resolveRelayerProviderOptions(options: OpenZeppelinRelayerProviderOptions, requestTimeoutMs: number): ResolvedRelayerProviderOptions {
  const resolved: ResolvedRelayerProviderOptions = {
    speed: options.speed,
    maxFeePerGasCap: options.maxFeePerGasCap ?? SHARED_SENDING_DEFAULTS.maxFeePerGasCap,
    perNetworkMaxFeePerGasCap: options.perNetworkMaxFeePerGasCap ?? new Map(),
    feeCacheMs: options.feeCacheMs ?? SHARED_SENDING_DEFAULTS.feeCacheMs,
    gasLimitMarginPercent: options.gasLimitMarginPercent ?? SHARED_SENDING_DEFAULTS.gasLimitMarginPercent,
    statusPollIntervalMs: options.statusPollIntervalMs ?? 1_000,
    receiptPollIntervalMs: options.receiptPollIntervalMs ?? SHARED_SENDING_DEFAULTS.receiptPollIntervalMs,
    signWaitMs: options.signWaitMs ?? 30_000,
    outcomeTimeoutMs: options.outcomeTimeoutMs ?? SHARED_SENDING_DEFAULTS.outcomeTimeoutMs,
    finalGraceMs: options.finalGraceMs ?? 5_000,
    reconcileAfterMs: options.reconcileAfterMs ?? requestTimeoutMs + 35_000,
    clockSkewToleranceMs: options.clockSkewToleranceMs ?? 300_000,
    reconcilePageSize: options.reconcilePageSize ?? 50,
    logger: options.logger ?? SILENT_TRANSACTION_LOGGER,
    onPhase: options.onPhase,
  };
  if (resolved.maxFeePerGasCap <= 0n) throw new Error('maxFeePerGasCap must be positive');
  for (const key of ['statusPollIntervalMs', 'receiptPollIntervalMs', 'signWaitMs', 'outcomeTimeoutMs', 'reconcilePageSize'] as const) {
    if (!(resolved[key] > 0)) throw new Error(`${key} must be positive, got ${resolved[key]}`);
  }
  for (const key of ['feeCacheMs', 'gasLimitMarginPercent', 'finalGraceMs', 'reconcileAfterMs', 'clockSkewToleranceMs'] as const) {
    if (!(resolved[key] >= 0)) throw new Error(`${key} must not be negative, got ${resolved[key]}`);
  }
  return resolved;
}
