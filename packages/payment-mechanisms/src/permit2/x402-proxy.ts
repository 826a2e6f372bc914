import type { PaymentTerms } from '../mechanism';

/** What a call of one of x402's Permit2 proxies settles: whose nonce it spends, and what it moves to whom. */
export interface ProxySettlement {
  owner: string;
  token: string;
  /** what it moves to the recipient (exact: the permitted amount; upto: the amount argument) */
  amount: bigint;
  nonce: bigint;
  to: string;
}

/**
 * One of x402's Permit2 proxies, as the code shared by the Permit2 mechanisms (its deployment check, the
 * transfers it makes, the search for who called it) needs to know it.
 */
export interface X402Permit2Proxy {
  /** lowercase; the same on every chain */
  address: string;
  /** how answers name it: "exact", "upto" */
  name: string;
  /** the settlement executor's immutable that names it (the executor calls it for an item, and no other proxy) */
  executorSlot: string;
  /** what a transaction calling it directly settles (settle or settleWithPermit); undefined for any other call */
  settlementOf(calldata: string): ProxySettlement | undefined;
  /**
   * Whether a transfer of `value` by it can be this payment's: the exact proxy moves the permitted amount
   * and nothing else, the upto proxy any amount up to it.
   */
  mayMove(value: bigint, terms: PaymentTerms): boolean;
}
