import type { ChainFamilyId } from '@facilitator/core';

/**
 * Where a transaction the network was asked about stands, in terms every family has: `unknown` (the node has
 * not seen it land: not sent, still in flight, dropped, or on a fork that lost), `landed` (included and
 * succeeded at the depth the network reads at) and `failed` (included and reverted or errored: what it would
 * have moved did not move).
 */
export type FamilyTransactionStatus = 'unknown' | 'landed' | 'failed';

/**
 * The reads of one network that mean the same in every family, each asked of the chain once. What only one
 * family has (EIP-3009 nonce states, a Solana blockhash's validity) stays on that family's own network object.
 */
export interface FamilyNetworkReads {
  /** the network's token (USDC) held by `owner`: an EVM account's balance; a Solana wallet's associated token account's amount (0 where it has none) */
  tokenBalance(owner: string): Promise<bigint>;
  /**
   * what `treasury` may still take from `merchant`'s tokens in fees: EVM, the ERC-20 allowance; Solana, the
   * merchant's associated token account's delegated amount where the treasury is its delegate (0 otherwise)
   */
  feeAllowance(merchant: string, treasury: string): Promise<bigint>;
  /** the native coin (ETH, SOL) `account` holds to pay for gas or fees, in its smallest unit */
  nativeBalance(account: string): Promise<bigint>;
  /** the chain's height now (an EVM block number; a Solana block height): later reads never answer lower */
  head(): Promise<bigint>;
  /** where the transaction `id` (an EVM hash, a Solana signature) stands */
  transactionStatus(id: string): Promise<FamilyTransactionStatus>;
}

/** One network opened by its family: its CAIP-2 id, its family, its token and its reads. */
export interface FamilyNetwork {
  /** CAIP-2: the key of every record of this network */
  readonly networkId: string;
  readonly family: ChainFamilyId;
  /** the token's address in the family's spelling (EVM: lowercase hex; Solana: the mint, base58) */
  readonly token: string;
  readonly reads: FamilyNetworkReads;
  /** releases the network's connections (idempotent) */
  close(): void;
}
