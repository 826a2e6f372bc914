import type { AuthorizationUse, FoundLog, MinedTransaction } from '@facilitator/evm-chain';

/**
 * What a mechanism asks of the chain when a payment is settled, as narrow ports over what UsdcClient
 * already does: each mechanism types its members with the part it uses, and the engine hands them one
 * object that does it all (`MechanismChain`; UsdcClient is one, the settlement tests' FakeChain another).
 * The ports only read: every call a mechanism makes, it encodes itself (its calldata is its own).
 */

/** The token a network settles, and the reads of its authorizations' nonces and uses, as UsdcClient makes them. */
export interface TokenAuthorizationCalls {
  /** lowercase or checksummed: the token the network settles */
  readonly tokenAddress: string;
  isAuthorizationUsed(authorizer: string, nonce: string): Promise<boolean>;
  findAuthorizationUse(authorizer: string, nonce: string, merchant: string): Promise<AuthorizationUse | undefined>;
}

/** A mechanism whose contracts are not the token (Permit2 and x402's proxies) reads them through these. */
export interface ContractReads {
  /** eth_call at the latest block */
  readContract(to: string, data: string): Promise<string>;
  /** logs of `address` matching `topics` (null: any) in the recent blocks (the window findAuthorizationUse searches) */
  recentLogs(address: string, topics: ReadonlyArray<string | null>): Promise<FoundLog[]>;
  /** undefined when the node has no receipt for it */
  minedTransaction(hash: string): Promise<MinedTransaction | undefined>;
  /**
   * Our settlement executor's address (the treasury, delegated to it by EIP-7702), when the caller settles
   * through one: a transaction to it is one of our batches, whose per-item logs (Settled, keyed by payer and
   * nonce) say which payments it executed. Absent: such a transaction is only a contract like any other.
   */
  readonly executor?: string;
}

export type MechanismChain = TokenAuthorizationCalls & ContractReads;

/** `chain`, telling the mechanisms that transactions to `executor` are our own batches (ContractReads.executor). */
export function withOurExecutor(chain: MechanismChain, executor: string): MechanismChain {
  return {
    tokenAddress: chain.tokenAddress,
    executor: executor.toLowerCase(),
    isAuthorizationUsed: (authorizer, nonce) => chain.isAuthorizationUsed(authorizer, nonce),
    findAuthorizationUse: (authorizer, nonce, merchant) => chain.findAuthorizationUse(authorizer, nonce, merchant),
    readContract: (to, data) => chain.readContract(to, data),
    recentLogs: (address, topics) => chain.recentLogs(address, topics),
    minedTransaction: (hash) => chain.minedTransaction(hash),
  };
}

/**
 * What a nonce's use and a payment's prerequisites are read through: verification's batched reader offers
 * this much on its hot path, settlement's UsdcClient all of MechanismChain.
 */
export type PaymentReads = Pick<TokenAuthorizationCalls, 'isAuthorizationUsed'> & Pick<ContractReads, 'readContract'>;
