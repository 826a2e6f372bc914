import { DAY_MS, type EnvReader } from '../parsers';

/** Abuse limits of the public verify and settle endpoints (see docs/decisions.md, "Abuse"). */
export interface AbuseConfig {
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

export interface WalletDeployLimits {
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

export function readAbuse(reader: EnvReader, feeAmount: bigint): AbuseConfig {
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

/** ERC-6492 wallet deployments our relayers pay for, per merchant and per factory within a window. */
export function readWalletDeployLimits(reader: EnvReader): WalletDeployLimits {
  return {
    perMerchant: reader.integer('WALLET_DEPLOYS_PER_MERCHANT', 5, 0, 1_000_000),
    perFactory: reader.integer('WALLET_DEPLOYS_PER_FACTORY', 50, 0, 1_000_000),
    failedProbesPerWallet: reader.integer('WALLET_PROBE_FAILURES_PER_WALLET', 2, 0, 1_000_000),
    windowMs: reader.integer('WALLET_DEPLOY_WINDOW_MS', 60 * 60_000, 1_000, 30 * DAY_MS),
  };
}
