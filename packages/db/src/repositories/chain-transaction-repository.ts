import { evmNetworkId, IdPrefix, newId } from '@facilitator/core';
import type { ChainTransactionAttempt } from '../generated/prisma/client';
import type { Pool } from '../pg-pool';
import { attemptFromColumns, transactionFromColumns, type Fees, type MinedStatus, type StoredTransaction, type TransactionPurpose } from './chain-transaction-row';
import { ExternalTransactionStatements, withSendLock } from './external-transaction-statements';
import { runQuery } from './pg-query';



export { ForeignProviderTransactionError, type Fees, type MinedStatus, type StoredTransaction, type TransactionPurpose } from './chain-transaction-row';
export type { ExternalTransaction, ExternalTransactionStatements, NewExternalTransaction, ProviderProgress } from './external-transaction-statements';

export interface NewTransaction {
  settlementId: string;
  purpose: TransactionPurpose;
  chainId: number;
  /** lowercase */
  from: string;
  /** lowercase */
  to: string;
  data: string;
  gasLimit: bigint;
  /** the sending key's signature over the row (evm-sending's row-authenticator) */
  authenticator: string;
}

export interface NewAttempt {
  hash: string;
  rawTransaction: string;
  fees: Fees;
}


/** A mined transaction watched for reorgs (see findAwaitingFinality). */
export interface AwaitingFinality {
  id: string;
  settlementId: string;
  purpose: TransactionPurpose;
  /** the outcome recorded when it was mined (and reported) */
  status: MinedStatus;
  minedHash: string;
  /** null while a reorg has it out of the chain */
  blockNumber: number | null;
  blockHash: string | null;
  reorgCount: number;
  rawTransaction: string;
}

/** Statuses after which nothing more is sent for a transaction. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['confirmed', 'reverted', 'replaced']);

/** Statuses of a transaction that may still be mined: the ones a nonce gap can hide in. */
const UNFINISHED = ['allocated', 'signed', 'broadcast'];

const WITH_ATTEMPTS = `
  SELECT t.*, (SELECT json_agg(a) FROM chain_transaction_attempts a WHERE a.transaction_id = t.id) AS attempts
    FROM chain_transactions t`;

const SQL = {
  findByKey: `${WITH_ATTEMPTS} WHERE t.settlement_id = $1 AND t.purpose = $2`,
  findById: `${WITH_ATTEMPTS} WHERE t.id = $1`,
  findUnfinishedBetween: `${WITH_ATTEMPTS}
    WHERE t.chain_id = $1 AND t.from_address = $2 AND t.nonce >= $3 AND t.nonce < $4 AND t.status = ANY($5::"ChainTransactionStatus"[])
      AND t.provider = 'local'
    ORDER BY t.nonce`,
  // One statement, so the key's nonce row is locked only until this autocommit ends. A conflicting
  // (settlement_id, purpose) fails the whole statement, which gives the nonce back.
  allocateAndInsert: `
    WITH allocated AS (
      INSERT INTO signer_nonces AS s (chain_id, address, next_nonce, updated_at)
      VALUES ($1, $2, $3::bigint + 1, now())
      ON CONFLICT (chain_id, address) DO UPDATE SET next_nonce = GREATEST(s.next_nonce, $3::bigint) + 1, updated_at = now()
      RETURNING next_nonce - 1 AS nonce
    )
    INSERT INTO chain_transactions
      (id, settlement_id, purpose, chain_id, network, from_address, to_address, data, nonce, gas_limit, authenticator, status, created_at, updated_at)
    SELECT $4, $5, $6, $1, $11, $2, $7, $8, allocated.nonce, $9, $10, 'allocated', now(), now() FROM allocated
    RETURNING *`,
  // The status moves allocated -> signed in the same statement that stores the first version: of two
  // concurrent callers, the second waits for the first's row lock, then finds the status moved on.
  storeFirstAttempt: `
    WITH claimed AS (
      UPDATE chain_transactions SET status = 'signed', updated_at = now()
       WHERE id = $1 AND status = 'allocated' RETURNING id
    )
    INSERT INTO chain_transaction_attempts (hash, transaction_id, raw_transaction, max_fee_per_gas, max_priority_fee_per_gas, created_at)
    SELECT $2, claimed.id, $3, $4, $5, $6 FROM claimed
    RETURNING *`,
  addAttempt: `
    INSERT INTO chain_transaction_attempts (hash, transaction_id, raw_transaction, max_fee_per_gas, max_priority_fee_per_gas, created_at)
    VALUES ($2, $1, $3, $4, $5, $6)
    ON CONFLICT (hash) DO UPDATE SET hash = EXCLUDED.hash
    RETURNING *`,
  markBroadcast: `
    WITH attempt AS (
      UPDATE chain_transaction_attempts SET broadcast_at = now(), last_error = NULL
       WHERE $2::text IS NOT NULL AND hash = $2 AND broadcast_at IS NULL
    )
    UPDATE chain_transactions SET status = 'broadcast', updated_at = now() WHERE id = $1 AND status = 'signed'`,
  recordAttemptError: `UPDATE chain_transaction_attempts SET last_error = $2 WHERE hash = $1`,
  recordMined: `
    UPDATE chain_transactions SET status = $2, mined_hash = $3, block_number = $4, revert_reason = $5, block_hash = $6, updated_at = now()
     WHERE id = $1`,
  // Settled transactions still watched for reorgs, with the signed version that was mined (to send it again).
  findAwaitingFinality: `
    SELECT t.id, t.settlement_id, t.purpose, t.status, t.mined_hash, t.block_number, t.block_hash, t.reorg_count, a.raw_transaction
      FROM chain_transactions t JOIN chain_transaction_attempts a ON a.hash = t.mined_hash
     WHERE t.chain_id = $1 AND t.final_at IS NULL AND t.status IN ('confirmed', 'reverted')
     ORDER BY t.block_number NULLS FIRST LIMIT $2`,
  markFinal: `UPDATE chain_transactions SET final_at = now(), updated_at = now() WHERE id = $1 AND final_at IS NULL`,
  // gone from the chain: no block until it is mined again (its stored outcome stays what was reported)
  markReorged: `
    UPDATE chain_transactions SET block_number = NULL, block_hash = NULL, reorg_count = reorg_count + 1, updated_at = now()
     WHERE id = $1 AND block_number IS NOT NULL RETURNING reorg_count`,
  // mined again after a reorg: its block, and its outcome as the chain has it now
  markReincluded: `
    UPDATE chain_transactions SET block_number = $2, status = $3, revert_reason = $4, block_hash = $5, updated_at = now() WHERE id = $1`,
  // its nonce was taken by another transaction while it was out of the chain: it will never be mined
  markLost: `UPDATE chain_transactions SET status = 'replaced', final_at = now(), updated_at = now() WHERE id = $1`,
  // The transaction of each of these settlements that moves the payer's money and is or will be on chain (not
  // replaced): its own transfer (sequential path) or its batch's settle transaction (atomic path); never the
  // sequential fee or an ERC-6492 wallet deployment, which an x402 pending answer must not name (its retry
  // waits for that transaction's outcome, which is not the payment's). Its hash: the mined one, else its newest
  // version broadcast, else its newest signed, else (an external provider's, which stores no versions until one
  // is mined) the newest hash the provider reported.
  paymentTransactionHashes: `
    SELECT s.id AS settlement_id, tx.hash
      FROM unnest($1::text[]) AS s(id)
      LEFT JOIN settlement_batch_items i ON i.settlement_id = s.id
      CROSS JOIN LATERAL (
        SELECT coalesce(t.mined_hash,
                 (SELECT a.hash FROM chain_transaction_attempts a WHERE a.transaction_id = t.id
                   ORDER BY a.broadcast_at IS NULL, a.created_at DESC LIMIT 1),
                 t.provider_hashes[cardinality(t.provider_hashes)]) AS hash
          FROM chain_transactions t
         WHERE t.status <> 'replaced'
           AND ((t.settlement_id = s.id AND t.purpose = 'transfer')
                OR (t.settlement_id = i.batch_id AND t.purpose = 'settle'))
         ORDER BY t.created_at DESC LIMIT 1
      ) tx
     WHERE tx.hash IS NOT NULL`,
  // never over a mined outcome another process recorded meanwhile
  markReplaced: `
    UPDATE chain_transactions SET status = 'replaced', updated_at = now()
     WHERE id = $1 AND status IN ('allocated', 'signed', 'broadcast')`,
};

type StatementName = keyof typeof SQL;

/**
 * Postgres access of the transaction provider, one prepared statement per operation (this is the worker's
 * hot path). The invariants live here: a nonce is allocated in the same statement that stores it on the
 * (settlementId, purpose) row, so a nonce is never lost nor given twice; the first signed version is
 * claimed with a status change, so concurrent resumers agree on it.
 */
export class ChainTransactionRepository {
  /** The rows an external provider (OpenZeppelin Relayer) sends: see ExternalTransactionStatements. */
  readonly external: ExternalTransactionStatements;

  constructor(private readonly pool: Pool) {
    this.external = new ExternalTransactionStatements(pool);
  }

  /** Whether anything is stored for this key, whichever provider sends it: its money state is open. */
  existsForKey(settlementId: string, purpose: TransactionPurpose): Promise<boolean> {
    return this.external.existsForKey(settlementId, purpose);
  }

  /**
   * Runs `work` as the one sender of an external provider's transaction (a session advisory lock, freed when
   * the process dies); `work`'s statements go through the locked connection.
   */
  withExternalSendLock<T>(transactionId: string, work: (locked: ExternalTransactionStatements) => Promise<T>): Promise<T> {
    return withSendLock(this.pool, transactionId, work);
  }

  async findByKey(settlementId: string, purpose: TransactionPurpose): Promise<StoredTransaction | null> {
    const rows = await this.query('findByKey', [settlementId, purpose]);
    return rows.length > 0 ? transactionFromColumns(rows[0]) : null;
  }

  async findById(id: string): Promise<StoredTransaction | null> {
    const rows = await this.query('findById', [id]);
    return rows.length > 0 ? transactionFromColumns(rows[0]) : null;
  }

  async getById(id: string): Promise<StoredTransaction> {
    const row = await this.findById(id);
    if (!row) throw new Error(`no chain transaction ${id}`);
    return row;
  }

  /**
   * Takes the key's next nonce from `signer_nonces` and stores the transaction with it, atomically. The
   * nonce moves forward to `chainPendingNonce` when the chain is ahead (the key was used elsewhere).
   * Returns null, with the nonce given back, when a transaction for (settlementId, purpose) already exists.
   */
  async allocateAndInsert(tx: NewTransaction, chainPendingNonce: bigint): Promise<StoredTransaction | null> {
    const id = newId(IdPrefix.ChainTransaction);
    try {
      const rows = await this.query('allocateAndInsert', [
        tx.chainId, tx.from, chainPendingNonce.toString(), id, tx.settlementId, tx.purpose, tx.to, tx.data, tx.gasLimit.toString(), tx.authenticator,
        evmNetworkId(tx.chainId),
      ]);
      return transactionFromColumns(rows[0]);
    } catch (error) {
      const { code, constraint } = error as { code?: string; constraint?: string };
      if (code === '23505' && constraint === 'chain_transactions_settlement_id_purpose_key') return null;
      throw error;
    }
  }

  /**
   * Stores the first signed version unless one exists: two processes resuming the same transaction end
   * up broadcasting the same signed bytes. `sign` runs only when no version is stored yet.
   */
  async storeFirstAttempt(row: StoredTransaction, sign: () => Promise<NewAttempt>): Promise<ChainTransactionAttempt> {
    if (row.status === 'allocated' && row.attempts.length === 0) {
      const attempt = await sign();
      const stored = await this.query('storeFirstAttempt', [row.id, ...attemptValues(attempt)]);
      if (stored.length > 0) return attemptFromColumns(stored[0]);
    }
    // someone stored a version first: theirs is the one to broadcast
    const existing = (await this.getById(row.id)).attempts;
    if (existing.length === 0) throw new Error(`chain transaction ${row.id} is ${row.status} but has no signed version`);
    return existing[existing.length - 1];
  }

  /** Stores a replacement (same nonce, higher fees). Idempotent on the hash: identical bytes are one attempt. */
  async addAttempt(transactionId: string, attempt: NewAttempt): Promise<ChainTransactionAttempt> {
    const rows = await this.query('addAttempt', [transactionId, ...attemptValues(attempt)]);
    return attemptFromColumns(rows[0]);
  }

  /** The node accepted `hash` (or holds another version with this nonce, when `hash` is null). */
  async markBroadcast(transactionId: string, hash: string | null): Promise<void> {
    await this.query('markBroadcast', [transactionId, hash]);
  }

  async recordAttemptError(hash: string, message: string): Promise<void> {
    await this.query('recordAttemptError', [hash, message.slice(0, 1_000)]);
  }

  async recordMined(transactionId: string, mined: { status: MinedStatus; hash: string; blockNumber: number; blockHash?: string; revertReason?: string }): Promise<void> {
    await this.query('recordMined', [transactionId, mined.status, mined.hash, mined.blockNumber, mined.revertReason ?? null, mined.blockHash ?? null]);
  }

  async markReplaced(transactionId: string): Promise<void> {
    await this.query('markReplaced', [transactionId]);
  }

  /** Mined transactions not yet final (FINALITY_DEPTH deep), oldest block first, those out of the chain before all. */
  async findAwaitingFinality(chainId: number, limit: number): Promise<AwaitingFinality[]> {
    const rows = await this.query('findAwaitingFinality', [chainId, limit]);
    return rows.map((r) => ({
      id: r.id as string,
      settlementId: r.settlement_id as string,
      purpose: r.purpose as TransactionPurpose,
      status: r.status as MinedStatus,
      minedHash: r.mined_hash as string,
      blockNumber: r.block_number == null ? null : Number(r.block_number),
      blockHash: (r.block_hash as string | null) ?? null,
      reorgCount: r.reorg_count as number,
      rawTransaction: r.raw_transaction as string,
    }));
  }

  async markFinal(transactionId: string): Promise<void> {
    await this.query('markFinal', [transactionId]);
  }

  /** True the first time a reorg is seen (until the transaction is mined again). */
  async markReorged(transactionId: string): Promise<boolean> {
    return (await this.query('markReorged', [transactionId])).length > 0;
  }

  async markReincluded(transactionId: string, mined: { status: MinedStatus; blockNumber: number; blockHash: string; revertReason?: string }): Promise<void> {
    await this.query('markReincluded', [transactionId, mined.blockNumber, mined.status, mined.revertReason ?? null, mined.blockHash]);
  }

  async markLost(transactionId: string): Promise<void> {
    await this.query('markLost', [transactionId]);
  }

  /** Unfinished transactions of one key with nonces in [fromNonce, belowNonce): the ones a nonce gap may hide in. */
  async findUnfinishedBetween(chainId: number, from: string, fromNonce: bigint, belowNonce: bigint): Promise<StoredTransaction[]> {
    const rows = await this.query('findUnfinishedBetween', [chainId, from, fromNonce.toString(), belowNonce.toString(), UNFINISHED]);
    return rows.map(transactionFromColumns);
  }

  /**
   * How many transactions of this key may still be mined (none when its last one was): a delegated
   * (EIP-7702) treasury's fees are sent one at a time, since geth-family pools hold one of its transactions.
   */
  async countUnfinishedFrom(chainId: number, from: string): Promise<number> {
    const rows = await runQuery(this.pool, {
      name: 'chain_tx_count_unfinished_from',
      text: `SELECT count(*)::int AS unfinished FROM chain_transactions WHERE chain_id = $1 AND from_address = $2 AND status = ANY($3::"ChainTransactionStatus"[])`,
      values: [chainId, from.toLowerCase(), UNFINISHED],
    });
    return rows[0].unfinished as number;
  }

  /** The hash of the transaction that pays each of these settlements' merchants, for those that have one signed. */
  async paymentTransactionHashes(settlementIds: readonly string[]): Promise<Map<string, string>> {
    if (settlementIds.length === 0) return new Map();
    const rows = await this.query('paymentTransactionHashes', [settlementIds]);
    return new Map(rows.map((r) => [r.settlement_id as string, r.hash as string]));
  }

  private async query(name: StatementName, values: unknown[]): Promise<Array<Record<string, unknown>>> {
    return runQuery(this.pool, { name: `chain_tx_${name}`, text: SQL[name], values });
  }
}

function attemptValues(attempt: NewAttempt): unknown[] {
  return [attempt.hash, attempt.rawTransaction, attempt.fees.maxFeePerGas.toString(), attempt.fees.maxPriorityFeePerGas.toString(), new Date()];
}
