/** A log as a transaction's receipt carries it: `index` is its place in its block. */
export interface ChainLog {
  /** lowercase */
  address: string;
  topics: readonly string[];
  data: string;
  index: number;
}

/** A log found by a search of recent blocks, with the transaction that emitted it. */
export interface FoundLog extends ChainLog {
  transactionHash: string;
  blockNumber: number;
}

/** A mined transaction as a search for someone else's execution of a payment reads it. */
export interface MinedTransaction {
  hash: string;
  blockNumber: number;
  /** the block that holds it (absent where a reader does not give it): what a reorg watch compares */
  blockHash?: string;
  /** lowercase; none for a contract creation */
  to?: string;
  /** its calldata */
  data: string;
  succeeded: boolean;
  /** in the order they were emitted */
  logs: readonly ChainLog[];
}
