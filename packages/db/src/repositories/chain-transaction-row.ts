import type { ChainTransaction, ChainTransactionAttempt } from '../generated/prisma/client';
import { dateColumn, optionalDateColumn } from './pg-query';

/**
 * What a transaction is for; with its owner (a settlement, or a batch for `settle`), its idempotency key.
 * `settle`: the executor's one-transaction fee and transfer for a batch of settlements. `wallet_deploy`: an ERC-6492
 * payer's factory call, sent by a relayer before the fee.
 */
export type TransactionPurpose = 'fee' | 'transfer' | 'wallet_deploy' | 'settle';

export type MinedStatus = 'confirmed' | 'reverted';

/** EIP-1559 fees of one signed version */
export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** The provider of the rows the local keys sign (ChainTransaction.provider). */
const LOCAL_PROVIDER = 'local';

/** A transaction the local keys sign, with every signed version of it, oldest first. Its nonce is always set. */
export type StoredTransaction = Omit<ChainTransaction, 'nonce'> & { nonce: bigint; attempts: ChainTransactionAttempt[] };

type Columns = Record<string, unknown>;

/**
 * The (settlementId, purpose) key holds a transaction another provider sends. One key is never sent by two
 * providers (the table's unique key spans them): after a switch of TRANSACTION_PROVIDER with transactions in
 * flight, each provider refuses the other's rows instead of sending a second transaction.
 */
export class ForeignProviderTransactionError extends Error {
  readonly retryable = false;

  constructor(
    readonly transactionId: string,
    readonly provider: string,
    readonly expectedProvider: string,
  ) {
    super(`chain transaction ${transactionId} is sent by the ${provider} provider, not ${expectedProvider}: only that provider can finish it`);
    this.name = 'ForeignProviderTransactionError';
  }
}

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

/** A chain_transactions row, whichever provider sends it. */
export function chainTransactionFromColumns(r: Columns): ChainTransaction {
  return {
    id: r.id as string,
    settlementId: r.settlement_id as string,
    purpose: r.purpose as string,
    chainId: r.chain_id as number,
    network: r.network as string,
    fromAddress: r.from_address as string,
    toAddress: r.to_address as string,
    data: r.data as string,
    nonce: r.nonce == null ? null : BigInt(r.nonce as string),
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
    provider: (r.provider as string | undefined) ?? LOCAL_PROVIDER,
    providerTransactionId: (r.provider_transaction_id as string | null | undefined) ?? null,
    providerStatus: (r.provider_status as string | null | undefined) ?? null,
    providerStatusReason: (r.provider_status_reason as string | null | undefined) ?? null,
    providerHashes: (r.provider_hashes as string[] | null | undefined) ?? [],
    providerRequestedAt: optionalDateColumn(r.provider_requested_at),
    authenticator: (r.authenticator as string | null | undefined) ?? null,
  };
}

/**
 * A row of the local keys, with its attempts when the query aggregated them into an `attempts` column.
 * Throws ForeignProviderTransactionError for another provider's row.
 */
export function transactionFromColumns(r: Columns): StoredTransaction {
  const row = chainTransactionFromColumns(r);
  if (row.provider !== LOCAL_PROVIDER || row.nonce === null) throw new ForeignProviderTransactionError(row.id, row.provider, LOCAL_PROVIDER);
  return { ...row, nonce: row.nonce, attempts: sortAttempts(((r.attempts as Columns[] | undefined) ?? []).map(attemptFromColumns)) };
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
