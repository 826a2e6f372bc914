import { evmNetworkId, IdPrefix, newId } from '@facilitator/core';
import type { ChainTransaction } from '../generated/prisma/client';
import type { Pool, PoolClient } from 'pg';
import { chainTransactionFromColumns, ForeignProviderTransactionError } from './chain-transaction-row';
import type { Fees, MinedStatus, TransactionPurpose } from './chain-transaction-row';
import { runQuery, type Row } from './pg-query';

/** A chain transaction an external provider (OpenZeppelin Relayer) signs and sends. */
export type ExternalTransaction = ChainTransaction & {
  /** how long ago (by the database's clock) the latest request to the provider began; null when none is open */
  requestedAgeMs: number | null;
};

export interface NewExternalTransaction {
  settlementId: string;
  purpose: TransactionPurpose;
  chainId: number;
  provider: string;
  /** lowercase: the provider's sending address */
  from: string;
  /** lowercase */
  to: string;
  data: string;
  gasLimit: bigint;
  /** the worker's authentication of the row (relayer-openzeppelin's rowAuthenticator) */
  authenticator: string;
}

/** What the provider reported of a transaction it accepted. */
export interface ProviderProgress {
  providerStatus: string;
  reason: string | null;
  /** its newest hash, once it signed one */
  hash: string | null;
  nonce: bigint | null;
  /** the provider says it reached the network: the row becomes `broadcast` */
  broadcast: boolean;
}

interface ExternalMined {
  status: MinedStatus;
  hash: string;
  blockNumber: number;
  blockHash: string;
  revertReason?: string;
  /** the mined version, read back from the chain: what the finality watcher sends again after a reorg */
  rawTransaction: string;
  fees: Fees;
}

const SELECT = `SELECT t.*, (extract(epoch FROM (now() - t.provider_requested_at)) * 1000)::float8 AS provider_requested_age_ms FROM chain_transactions t`;
const RETURNING = `RETURNING *, (extract(epoch FROM (now() - provider_requested_at)) * 1000)::float8 AS provider_requested_age_ms`;

const SQL = {
  insert: `
    INSERT INTO chain_transactions
      (id, settlement_id, purpose, chain_id, network, from_address, to_address, data, nonce, gas_limit, status, provider, authenticator, created_at, updated_at)
    VALUES ($1, $2, $3, $4, $11, $5, $6, $7, NULL, $8, 'allocated', $9, $10, now(), now())
    ${RETURNING}`,
  findByKey: `${SELECT} WHERE t.settlement_id = $1 AND t.purpose = $2`,
  findById: `${SELECT} WHERE t.id = $1`,
  existsForKey: `SELECT EXISTS (SELECT 1 FROM chain_transactions WHERE settlement_id = $1 AND purpose = $2) AS present`,
  // committed before the request is made, so a crash during it leaves the trace that reconciliation looks for
  markRequested: `
    UPDATE chain_transactions SET provider_requested_at = now(), updated_at = now()
     WHERE id = $1 AND provider_transaction_id IS NULL ${RETURNING}`,
  // the provider refused the request: nothing of it exists there, so nothing needs reconciling
  clearRequested: `UPDATE chain_transactions SET provider_requested_at = NULL, updated_at = now() WHERE id = $1 AND provider_transaction_id IS NULL`,
  recordAccepted: `
    UPDATE chain_transactions
       SET provider_transaction_id = $2, provider_status = $3, provider_status_reason = $4, provider_requested_at = NULL,
           status = CASE WHEN status = 'allocated' THEN 'signed'::"ChainTransactionStatus" ELSE status END, updated_at = now()
     WHERE id = $1 AND provider_transaction_id IS NULL
    ${RETURNING}`,
  claimedAmong: `SELECT provider_transaction_id FROM chain_transactions WHERE provider = $1 AND provider_transaction_id = ANY($2::text[])`,
  // never backwards (a late poll after a webhook), never over a mined or given-up outcome
  recordProgress: `
    UPDATE chain_transactions
       SET provider_status = $2, provider_status_reason = $3,
           provider_hashes = CASE WHEN $4::text IS NULL OR $4::text = ANY(provider_hashes) THEN provider_hashes ELSE array_append(provider_hashes, $4::text) END,
           nonce = coalesce(nonce, $5::bigint),
           status = CASE WHEN $6::boolean AND status IN ('allocated', 'signed') THEN 'broadcast'::"ChainTransactionStatus" ELSE status END,
           updated_at = now()
     WHERE id = $1 AND status IN ('allocated', 'signed', 'broadcast')
    ${RETURNING}`,
  // the mined version becomes the row's one attempt, so the finality watcher (which joins it) watches it like ours
  recordMined: `
    WITH attempt AS (
      INSERT INTO chain_transaction_attempts (hash, transaction_id, raw_transaction, max_fee_per_gas, max_priority_fee_per_gas, broadcast_at, created_at)
      VALUES ($3, $1, $7, $8, $9, now(), now())
      ON CONFLICT (hash) DO NOTHING
    )
    UPDATE chain_transactions
       SET status = $2, mined_hash = $3, block_number = $4, block_hash = $5, revert_reason = $6,
           provider_hashes = CASE WHEN $3 = ANY(provider_hashes) THEN provider_hashes ELSE array_append(provider_hashes, $3) END,
           updated_at = now()
     WHERE id = $1`,
  markGivenUp: `
    UPDATE chain_transactions SET status = 'replaced', provider_status = $2, provider_status_reason = $3, updated_at = now()
     WHERE id = $1 AND status IN ('allocated', 'signed', 'broadcast')`,
};

type StatementName = keyof typeof SQL;

// pg_advisory_lock's first key: this lock's namespace (the second is the transaction id's hash)
const SEND_LOCK_NAMESPACE = 0x0e7a0001;

/**
 * The statements of chain_transactions rows that an external provider sends (part of ChainTransactionRepository,
 * the table's owner). The provider picks the nonce and signs; we store the row before asking it anything, the
 * time of each request before it is made, and its id as soon as it answers.
 */
export class ExternalTransactionStatements {
  constructor(private readonly db: Pool | PoolClient) {}

  /** Stores a new row for (settlementId, purpose); null when one exists already (of any provider). */
  async insert(tx: NewExternalTransaction): Promise<ExternalTransaction | null> {
    try {
      const rows = await this.query('insert', [
        newId(IdPrefix.ChainTransaction), tx.settlementId, tx.purpose, tx.chainId, tx.from, tx.to, tx.data, tx.gasLimit.toString(), tx.provider, tx.authenticator,
        evmNetworkId(tx.chainId),
      ]);
      return externalFromColumns(rows[0]);
    } catch (error) {
      const { code, constraint } = error as { code?: string; constraint?: string };
      if (code === '23505' && constraint === 'chain_transactions_settlement_id_purpose_key') return null;
      throw error;
    }
  }

  /** The row of this key, if it is `provider`'s; ForeignProviderTransactionError when another provider sends it. */
  async findByKey(settlementId: string, purpose: TransactionPurpose, provider: string): Promise<ExternalTransaction | null> {
    const rows = await this.query('findByKey', [settlementId, purpose]);
    return rows.length > 0 ? ofProvider(externalFromColumns(rows[0]), provider) : null;
  }

  async get(id: string, provider: string): Promise<ExternalTransaction> {
    const rows = await this.query('findById', [id]);
    if (rows.length === 0) throw new Error(`no chain transaction ${id}`);
    return ofProvider(externalFromColumns(rows[0]), provider);
  }

  /** Whether anything is stored for this key, whichever provider sends it. */
  async existsForKey(settlementId: string, purpose: TransactionPurpose): Promise<boolean> {
    return (await this.query('existsForKey', [settlementId, purpose]))[0].present as boolean;
  }

  async markRequested(id: string): Promise<void> {
    await this.query('markRequested', [id]);
  }

  async clearRequested(id: string): Promise<void> {
    await this.query('clearRequested', [id]);
  }

  /**
   * Stores the provider's id of the transaction. `taken` when another row holds that id already (a
   * reconciliation of a row with identical calldata claimed it first); `stored` otherwise (also when this
   * row had an id already: the caller reloads it).
   */
  async recordAccepted(id: string, providerTransactionId: string, providerStatus: string, reason: string | null): Promise<'stored' | 'taken'> {
    try {
      await this.query('recordAccepted', [id, providerTransactionId, providerStatus, reason]);
      return 'stored';
    } catch (error) {
      const { code, constraint } = error as { code?: string; constraint?: string };
      if (code === '23505' && constraint === 'chain_transactions_provider_provider_transaction_id_key') return 'taken';
      throw error;
    }
  }

  /** Which of these provider ids a row of ours holds already. */
  async claimedAmong(provider: string, providerTransactionIds: readonly string[]): Promise<Set<string>> {
    if (providerTransactionIds.length === 0) return new Set();
    const rows = await this.query('claimedAmong', [provider, providerTransactionIds]);
    return new Set(rows.map((r) => r.provider_transaction_id as string));
  }

  /** Null when the row is no longer in flight (mined or given up): nothing is changed then. */
  async recordProgress(id: string, progress: ProviderProgress): Promise<ExternalTransaction | null> {
    const rows = await this.query('recordProgress', [
      id, progress.providerStatus, progress.reason, progress.hash, progress.nonce?.toString() ?? null, progress.broadcast,
    ]);
    return rows.length > 0 ? externalFromColumns(rows[0]) : null;
  }

  async recordMined(id: string, mined: ExternalMined): Promise<void> {
    await this.query('recordMined', [
      id, mined.status, mined.hash, mined.blockNumber, mined.blockHash, mined.revertReason ?? null,
      mined.rawTransaction, mined.fees.maxFeePerGas.toString(), mined.fees.maxPriorityFeePerGas.toString(),
    ]);
  }

  /** The provider gave the transaction up and nothing of it can be mined: `replaced`, as a lost nonce of ours. */
  async markGivenUp(id: string, providerStatus: string, reason: string | null): Promise<void> {
    await this.query('markGivenUp', [id, providerStatus, reason]);
  }

  private query(name: StatementName, values: unknown[]): Promise<Row[]> {
    return runQuery(this.db, { name: `chain_tx_ext_${name}`, text: SQL[name], values });
  }
}

/**
 * Runs `work` holding a session advisory lock on one transaction: one sender per row, across processes. The
 * lock lives as long as the connection, so a process that dies mid-request frees it at once; `work` writes
 * through the same connection (each statement committed on its own), so a crash loses nothing it wrote.
 */
export async function withSendLock<T>(pool: Pool, transactionId: string, work: (locked: ExternalTransactionStatements) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await runQuery(client, { name: 'chain_tx_ext_lock', text: 'SELECT pg_advisory_lock($1, hashtext($2))', values: [SEND_LOCK_NAMESPACE, transactionId] });
    try {
      return await work(new ExternalTransactionStatements(client));
    } finally {
      await runQuery(client, { name: 'chain_tx_ext_unlock', text: 'SELECT pg_advisory_unlock($1, hashtext($2))', values: [SEND_LOCK_NAMESPACE, transactionId] }).catch(
        () => (broken = true),
      );
    }
  } catch (error) {
    if ((error as { dependency?: string }).dependency === 'database') broken = true;
    throw error;
  } finally {
    // a connection whose unlock failed still holds the lock: it is closed, not given back
    client.release(broken);
  }
}

function externalFromColumns(r: Row): ExternalTransaction {
  const age = r.provider_requested_age_ms;
  return { ...chainTransactionFromColumns(r), requestedAgeMs: age == null ? null : Number(age) };
}

function ofProvider(row: ExternalTransaction, provider: string): ExternalTransaction {
  if (row.provider !== provider) throw new ForeignProviderTransactionError(row.id, row.provider, provider);
  return row;
}
