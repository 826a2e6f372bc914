import type { ChainTransaction, ChainTransactionAttempt } from '../generated/prisma/client';
import { dateColumn, optionalDateColumn } from './pg-query';

/** A transaction with every signed version of it, oldest first. */
export type StoredTransaction = ChainTransaction & { attempts: ChainTransactionAttempt[] };

type Columns = Record<string, unknown>;

// pg returns int8 as text: converted to bigint here.

export function attemptFromColumns(r: Columns): ChainTransactionAttempt {
  return {
    hash: r.hash as string,
    transactionId: r.transaction_id as string,
    rawTransaction: r.raw_transaction as string,
    maxFeePerGas: r.max_fee_per_gas as string,
    maxPriorityFeePerGas: r.max_priority_fee_per_gas as string,
    broadcastAt: optionalDateColumn(r.broadcast_at),
    lastError: r.last_error as string | null,
    createdAt: dateColumn(r.created_at),
  };
}

/** A chain_transactions row, with its attempts when the query aggregated them into an `attempts` column. */
export function transactionFromColumns(r: Columns): StoredTransaction {
  return {
    id: r.id as string,
    settlementId: r.settlement_id as string,
    purpose: r.purpose as string,
    chainId: r.chain_id as number,
    fromAddress: r.from_address as string,
    toAddress: r.to_address as string,
    data: r.data as string,
    nonce: BigInt(r.nonce as string),
    gasLimit: r.gas_limit as string,
    status: r.status as ChainTransaction['status'],
    minedHash: r.mined_hash as string | null,
    blockNumber: r.block_number == null ? null : BigInt(r.block_number as string),
    blockHash: (r.block_hash as string | null | undefined) ?? null,
    revertReason: r.revert_reason as string | null,
    finalAt: optionalDateColumn(r.final_at),
    reorgCount: (r.reorg_count as number | undefined) ?? 0,
    createdAt: dateColumn(r.created_at),
    updatedAt: dateColumn(r.updated_at),
    attempts: sortAttempts(((r.attempts as Columns[] | undefined) ?? []).map(attemptFromColumns)),
  };
}

/** Oldest first; fees break ties, since a replacement always pays more than what it replaces. */
export function sortAttempts(attempts: ChainTransactionAttempt[]): ChainTransactionAttempt[] {
  return [...attempts].sort(
    (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || compareBigInt(BigInt(a.maxFeePerGas), BigInt(b.maxFeePerGas)),
  );
}

function compareBigInt(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
