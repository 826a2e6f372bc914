import type { WalletDeploymentGuard } from './wallet-deployment-guard';
import type { UsdcClient } from '@facilitator/evm-chain';
import type { MechanismChain } from '@facilitator/payment-mechanisms';
import type { TransactionProvider } from '@facilitator/evm-sending';
import type { SettlementAccounting } from './accounting';
import type { AtomicSettlement } from './atomic/atomic-settlement';
import type { SettlementAdmission } from './settlement-admission';
import type { OutcomeWaits } from './outcome-waits';
import type { FeeReverts, Settlement, Verification } from '@facilitator/db';
import type { StepAwait, StepResult, StepWait } from './step-outcome';

export type SettlementWithVerification = Settlement & { verification: Verification };

/**
 * The token reads, estimates and calldata the steps use, and what a payment's mechanism reads
 * (MechanismChain): all of their chain access besides the TransactionProvider. A UsdcClient is one; a unit
 * test passes a fake.
 */
export type SettlementChain = Pick<
  UsdcClient,
  | 'tokenAddress'
  | 'allowance'
  | 'balanceOf'
  | 'isAuthorizationUsed'
  | 'hasCode'
  | 'estimate'
  | 'findAuthorizationUse'
  | 'transferFromData'
  | 'readContract'
  | 'recentLogs'
  | 'minedTransaction'
  | 'head'
> &
  MechanismChain;

/**
 * A network the worker settles on. `Chain` is what the steps are given (SettlementChain); the default keeps
 * the full UsdcClient for the composition root, which also reads key balances through it.
 */
export interface SettlementNetwork<Chain extends SettlementChain = UsdcClient> {
  /** the family whose step table settles on it (`STEPS_BY_FAMILY`) */
  family: 'evm';
  chainId: number;
  caip2: string;
  rpcUrl: string;
  confirmations: number;
  usdc: Chain;
  /** gas ceilings per transaction kind (GAS_CAP_*_<chainId>) */
  gasCaps: { fee: bigint; transfer: bigint; contractTransfer: bigint; walletDeploy: bigint };
  /** lowercase; factories an ERC-6492 payer's wallet may be deployed through (WALLET_FACTORIES_<chainId>) */
  walletFactories: readonly string[];
  /** lowercase; the wallet implementations (singletons) such a factory may deploy (WALLET_IMPLEMENTATIONS_<chainId>) */
  walletImplementations: readonly string[];
  /**
   * the token's EIP-712 domain separator (pinned by TOKEN_EIP712_* or read from the token once): lets the worker
   * check a payment's signature itself, offline; absent, the pre-flight proves it by the transfer's estimate
   */
  tokenDomainSeparator?: () => Promise<Uint8Array>;
}

/** When a merchant's fee transfers keep reverting, its settlements pause for a while (griefing). */
export interface MerchantPausePolicy {
  afterReverts: number;
  windowMs: number;
}

/**
 * What a step reads and may act through, by kind: the settlement (its payment is read from it once per run,
 * `paymentOf`), the network's chain reads, the chain ports it sends and waits through, the signers, the
 * policy it applies, and what it records of itself.
 */
export interface StepContext {
  settlement: SettlementWithVerification;
  network: SettlementNetwork<SettlementChain>;
  chain: StepChain;
  signers: StepSigners;
  policy: StepPolicy;
  records: StepRecords;
}

/** How a step reaches the chain beyond the network's reads: it sends, waits for outcomes, reads a payer's code, batches. */
export interface StepChain {
  transactions: TransactionProvider;
  /**
   * the outcomes of transactions already sent, waited for outside the job's slot: a step that gets `pending`
   * returns `{ awaiting }` and runs again once the outcome is known
   */
  outcomes: Pick<OutcomeWaits, 'within'>;
  /**
   * Whether an address has code (a contract wallet, a delegated account). Read once per run of the machine
   * while nothing has been sent: the pre-flight, the allowance check and the fee's placement ask about the
   * same payer within milliseconds, and each ask was an RPC call per settlement.
   */
  codeAt(address: string): Promise<boolean>;
  /** the atomic path's batches; absent in a worker that only settles sequentially */
  atomic?: AtomicSettlement;
}

/** Who signs what a step sends: the relayers in turn, and the treasury. */
export interface StepSigners {
  /** the relayer keys' addresses; the first one also dry-runs transfers */
  relayers: readonly string[];
  /** the relayer for a new transaction (in turn, skipping those under their minimum balance); none when all are */
  nextRelayer(): Promise<string | undefined>;
  /** whether any relayer is at or above its minimum balance (the turn does not move) */
  anyFundedRelayer(): Promise<boolean>;
  treasury: string;
  /**
   * whether this worker holds the treasury's key (TREASURY_PRIVATE_KEY): the sequential path sends the fee
   * from the treasury and runs only then; without it a settlement goes atomic or waits for the atomic path
   */
  treasurySigns: boolean;
  /**
   * seals a settlement whose pre-flight passed here, and checks the seal before the sequential fee is sent: the
   * treasury charges only for payments this worker admitted, never for a row a database writer inserted (absent:
   * this worker seals nothing and sends no sequential fee)
   */
  admission?: SettlementAdmission;
}

/** The rules a step applies, decided before it runs: the path, the settlement's own fee, validity margins, pauses and limits. */
export interface StepPolicy {
  /**
   * the path this network allows new settlements now (the worker's SettlementPathPolicy, read when the step
   * began): `atomic` only where the treasury's delegation to the executor is in place
   */
  networkPath: 'atomic' | 'sequential';
  /**
   * the settlement's own fee, decided once when it was created and stored on its row: every step reserves,
   * charges and reports this amount, whatever this worker's FEE_AMOUNT says
   */
  feeAmount: bigint;
  /**
   * the fee the atomic path's executor takes with each item: this worker's FEE_AMOUNT, which its executor
   * was checked against; a settlement whose own fee differs never goes through the executor
   */
  executorFee: bigint;
  /** an authorization must stay valid this long when the transfer is attempted */
  expiryMarginSeconds: number;
  /** Unix seconds */
  now(): number;
  merchantPause: MerchantPausePolicy;
  /** failure accounting, the minimum checked again, the payer's value in flight (absent: none of it, as before) */
  accounting?: SettlementAccounting;
  /** checks and limits before an ERC-6492 wallet is deployed at our expense; absent: no wallet is deployed */
  walletDeployments?: WalletDeploymentGuard;
}

/** What a step records of its settlement in the database, and reads back of the merchant's record, besides its transition. */
export interface StepRecords {
  /**
   * Commits to sending the settlement's fee (the sequential path; a batch claims its items itself): false
   * when a settle request stopped the settlement first (it is final; nothing may be sent)
   */
  claimSend(): Promise<boolean>;
  /**
   * Commits to signing a sequential x402 settlement's transfer: false when its settle request, which could not
   * wait longer, withheld it first and answered failed (the transfer must then never be sent)
   */
  claimTransfer(): Promise<boolean>;
  /** fee transfers of the merchant that were sent and reverted since `since` */
  feeRevertsOfMerchant(merchant: string, chainId: number, since: Date): Promise<FeeReverts>;
}

/**
 * Does the work of one state and says where to go next, or that the settlement must wait in its state
 * (nothing sent), or that it awaits the outcome of a transaction it sent. Must be safe to run again after a crash.
 */
export type Step = (ctx: StepContext) => Promise<StepResult | StepWait | StepAwait>;
