import type { Pool } from 'pg';
import type { Verification } from '../generated/prisma/client';
import { VerificationInsertBatcher, type StoredVerification } from './verification-insert-batcher';
import { runQuery, tagAsDatabaseError } from './pg-query';
import { fromColumns, type NewVerificationRow } from './verification-row';

export type VerificationRow = Verification;
export type { NewVerificationRow } from './verification-row';
export type { StoredVerification } from './verification-insert-batcher';


// a rejected verification keeps who, what and why, not the bodies (see verificationRecordOf)
const REJECT = `
  UPDATE verifications SET status = 'rejected', failure_message = $2, failure_details = $3::jsonb,
         request = NULL, metadata = NULL, signature = NULL, updated_at = now()
  WHERE id = $1 RETURNING *`;

// Rejected verifications past retention (their webhook events go first: WebhookEventRepository).
// Settlements only ever refer to verified rows; the check keeps this safe all the same. Batched so one run
// holds no long lock.
const PURGE_REJECTED = `
  WITH doomed AS (
    SELECT id FROM verifications v
     WHERE status = 'rejected' AND created_at < $1
       AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.verification_id = v.id)
       AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.verification_id = v.id)
     ORDER BY created_at LIMIT $2
  )
  DELETE FROM verifications v USING doomed d WHERE v.id = d.id`;

const FIND_BY_ID = `SELECT * FROM verifications WHERE id = $1`;

// the index on (chain_id, token_address, payer, nonce) finds the few rows of one payment; only those of
// this very authorization (its fingerprint) count
const FIND_LATEST_VERIFIED = `
  SELECT * FROM verifications
   WHERE chain_id = $1 AND token_address = $2 AND payer = $3 AND nonce = $4 AND status = 'verified'
     AND authorization_fingerprint = $5
   ORDER BY created_at DESC LIMIT 1`;

export class VerificationRepository {
  private readonly inserts: VerificationInsertBatcher;

  /** every statement of verification is on the hot path, so all go through plain `pg` (see pg-pool.ts) */
  constructor(private readonly pool: Pool) {
    this.inserts = new VerificationInsertBatcher(pool, tagAsDatabaseError);
  }

  async create(row: NewVerificationRow): Promise<VerificationRow> {
    return (await this.inserts.insert(row)).record;
  }

  /**
   * Stores the row and reports, in the same round trip, the settlement of ours that already used the
   * row's nonce (chain, token, payer and nonce are the row's own), and any record holding that nonce for
   * another authorization.
   */
  createCheckingNonce(row: NewVerificationRow): Promise<StoredVerification> {
    return this.inserts.insert(row);
  }

  async reject(id: string, message: string, details: Record<string, unknown>): Promise<VerificationRow> {
    const rows = await runQuery(this.pool, { name: 'verification_reject', text: REJECT, values: [id, message, JSON.stringify(details)] });
    // only the verification service calls this, for a row it has just stored: a missing one is a bug
    if (rows.length === 0) throw new Error(`no verification ${id} to reject`);
    return fromColumns(rows[0]);
  }

  /** Deletes up to `limit` rejected verifications created before `before`; returns how many went. */
  async purgeRejected(before: Date, limit: number): Promise<number> {
    const result = await this.pool.query(PURGE_REJECTED, [before, limit]).catch((err: unknown) => {
      throw tagAsDatabaseError(err);
    });
    return result.rowCount ?? 0;
  }

  async findById(id: string): Promise<VerificationRow | null> {
    const rows = await runQuery(this.pool, { name: 'verification_by_id', text: FIND_BY_ID, values: [id] });
    return rows.length > 0 ? fromColumns(rows[0]) : null;
  }

  /**
   * The newest successful verification of one authorization (the payer's nonce and the fingerprint of
   * everything it signed): what a Form A settle refers to. Another authorization with the same nonce is
   * another payment, never this one's.
   */
  async findLatestVerified(payment: { chainId: number; tokenAddress: string; payer: string; nonce: string; authorizationFingerprint: string }): Promise<VerificationRow | null> {
    const { chainId, tokenAddress, payer, nonce, authorizationFingerprint } = payment;
    const rows = await runQuery(this.pool, {
      name: 'verification_latest_verified_v2',
      text: FIND_LATEST_VERIFIED,
      values: [chainId, tokenAddress, payer, nonce, authorizationFingerprint],
    });
    return rows.length > 0 ? fromColumns(rows[0]) : null;
  }
}
