/**
 * "The external transaction provider" of the spec: whatever lands our transactions on chain. Two
 * implementations: the local keys (LocalKeyTransactionProvider, here) and OpenZeppelin Relayer
 * (packages/relayer-openzeppelin).
 *
 * Every transaction has an idempotency key, (settlementId, purpose): however often `submit` is called
 * for one key, across crashes and processes, at most one transaction for it is ever mined.
 */
// the purpose is part of the idempotency key the transaction repository stores, so it is defined there
import type { TransactionPurpose } from '@facilitator/db';

export interface TransactionRequest {
  settlementId: string;
  purpose: TransactionPurpose;
  chainId: number;
  /** the address of a key this provider holds: the treasury for fees, a relayer for transfers */
  from: string;
  to: string;
  /** calldata, 0x hex */
  data: string;
  /** refuse (GasCapExceededError) instead of sending when the estimate is above this */
  gasCap?: bigint;
  /**
   * sign with this gas limit instead of the estimate plus its margin (the estimate still runs, as the check
   * that the transaction does not revert): for a batch whose items each have gas of their own, which an
   * estimate made with their cheapest path would not leave them
   */
  gasLimit?: bigint;
}

export interface SubmittedTransaction {
  /** our id of the transaction (stable across fee bumps) */
  id: string;
  from: string;
  nonce: bigint;
  /** the newest signed version's hash */
  hash: string;
  /** every hash ever broadcast for it, oldest first */
  hashes: string[];
}

export interface TransactionLog {
  address: string;
  topics: string[];
  data: string;
}

export type TransactionOutcome =
  | { status: 'confirmed'; hash: string; blockNumber: number; logs: TransactionLog[] }
  | { status: 'reverted'; hash: string; blockNumber: number; reason?: string };

/** The network's base fee against the highest max fee per gas we sign (MAX_FEE_PER_GAS_GWEI_<chainId>). */
export interface NetworkFee {
  baseFeePerGas: bigint;
  maxFeePerGasCap: bigint;
  /** nothing signed under the cap can be included now: new transactions wait */
  aboveCap: boolean;
}

export interface TransactionProvider {
  /** Sends the transaction, or returns (and re-broadcasts if the node lost it) the one already sent for this key. */
  submit(request: TransactionRequest): Promise<SubmittedTransaction>;
  /**
   * The transaction already sent (signed and stored) for this key, if any; nothing is sent. A transaction
   * whose nonce was stored but that a crash left unsigned is not returned: `submit` finishes it.
   */
  find(settlementId: string, purpose: TransactionPurpose): Promise<SubmittedTransaction | null>;
  /**
   * Whether anything at all was stored for this key, a nonce allocated but never signed included: such a
   * nonce will still be sent (later nonces of the key wait on it), so its settlement's money state is open.
   */
  hasAny(settlementId: string, purpose: TransactionPurpose): Promise<boolean>;
  /**
   * Waits until one version of the transaction is mined with `confirmations` confirmations. Replaces it
   * with a fee bump when it stays unmined, and re-broadcasts it when the node dropped it.
   */
  waitForOutcome(transactionId: string, confirmations: number): Promise<TransactionOutcome>;
  /** The network's fee now (read at most every few hundred ms): whether a new transaction can be included. */
  networkFee(chainId: number): Promise<NetworkFee>;
}
