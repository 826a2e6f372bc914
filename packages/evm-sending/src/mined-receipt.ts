/** The parts of a transaction receipt that sending needs, read from the node's JSON without ethers' formatting. */
export interface MinedTransactionReceipt {
  hash: string;
  blockNumber: number;
  /** the block that holds it: a reorg that replaces the block changes it */
  blockHash: string;
  /** 1 success, 0 reverted */
  status: number;
  gasUsed: bigint;
  logs: Array<{ address: string; topics: string[]; data: string }>;
}

interface RpcReceipt {
  transactionHash: string;
  blockNumber: string | null;
  blockHash: string;
  status: string;
  gasUsed: string;
  logs: Array<{ address: string; topics: string[]; data: string }>;
}

/**
 * An `eth_getTransactionReceipt` answer, or null while the transaction is not mined. (Polling receipts is
 * the worker's most frequent call; ethers' receipt objects cost several times the request itself.)
 */
export function minedReceiptFromRpc(raw: unknown): MinedTransactionReceipt | null {
  if (raw === null || raw === undefined) return null;
  const r = raw as RpcReceipt;
  if (r.blockNumber === null || r.blockNumber === undefined) return null;
  return {
    hash: r.transactionHash,
    blockNumber: Number(BigInt(r.blockNumber)),
    blockHash: r.blockHash,
    status: Number(BigInt(r.status)),
    gasUsed: BigInt(r.gasUsed),
    logs: r.logs.map((log) => ({ address: log.address, topics: [...log.topics], data: log.data })),
  };
}
