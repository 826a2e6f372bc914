import type { Pool } from 'pg';
import type { PaymentNonce } from './payment-nonce';
import type { Verification } from '../generated/prisma/client';
import { VerificationInsertBatcher, type StoredVerification } from './verification-insert-batcher';
import { dateColumn, runCount, runQuery, tagAsDatabaseError } from './pg-query';
import { fromColumns, type NewVerificationRow } from './verification-row';
import { optionalMs, windowRows, type StatusWindow, type WindowLatency } from './status-windows';
import type { RetentionCursor, RetentionPage } from './retention-page';
export { RETENTION_START, type RetentionCursor, type RetentionPage } from './retention-page';

export type VerificationRow = Verification;
export type { NewVerificationRow } from './verification-row';
export type { StoredVerification } from './verification-insert-batcher';


// a rejected verification keeps who, what and why, not the bodies (see verificationRecordOf)
const REJECT = `
  UPDATE verifications SET status = 'rejected', failure_message = $2, failure_details = $3::jsonb,
         request = NULL, metadata = NULL, signature = NULL, payload = NULL, updated_at = now()
  WHERE id = $1 RETURNING *`;

// Retention walks (docs/decisions.md, "Retention"): pages oldest first after a cursor (created_at, id),
// so a run reads each old row once however many are kept. A verification may go once nothing refers to it.
const REJECTED_PAGE = `
  SELECT id, created_at FROM verifications
   WHERE status = 'rejected' AND created_at < $1
     AND created_at >= $2 AND (created_at > $2 OR id > $3)
   ORDER BY created_at, id LIMIT $4`;

// Verified, and no settlement refers to it, and it can never settle: its authorization's validBefore
// (unix seconds, decimal text) is before $5 (now minus the margin), or it is older than the cap ($6). Such
// a row was made before its validBefore, so it lies before $1 (now minus the margin) too: the index on
// (status, created_at) bounds the walk.
const UNSETTLED_PAGE = `
  SELECT v.id, v.created_at FROM verifications v
   WHERE v.status = 'verified' AND v.created_at < $1
     AND v.created_at >= $2 AND (v.created_at > $2 OR v.id > $3)
     AND (v.created_at < $6 OR v.valid_before IS NULL OR v.valid_before::numeric < $5::numeric)
     AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.verification_id = v.id)
   ORDER BY v.created_at, v.id LIMIT $4`;

// checked again as it deletes: a settlement or an event that appeared since the page was read keeps the row
const DELETE_UNREFERENCED = `
  DELETE FROM verifications v
   WHERE v.id = ANY($1::text[])
     AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.verification_id = v.id)
     AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.verification_id = v.id)`;

const FIND_BY_ID = `SELECT * FROM verifications WHERE id = $1`;

// the index on (chain_id, nonce_space, payer, nonce) finds the few rows of one payment; only those of
// this very authorization (its fingerprint) count, and a row an older process stored without one (a rolling
// deploy) comes after them, for the caller to judge by its columns
const FIND_LATEST_VERIFIED = `
  SELECT * FROM verifications
   WHERE chain_id = $1 AND nonce_space = $2 AND payer = $3 AND nonce = $4 AND status = 'verified'
     AND (authorization_fingerprint = $5 OR authorization_fingerprint IS NULL)
   ORDER BY authorization_fingerprint IS NULL, created_at DESC LIMIT 1`;

// The status page: per window and network, how many verifies and their verify_ms p50/p95. The BRIN index on
// created_at bounds each window's scan; rows older than the verify_ms column (null) are left out.
const LATENCY_BY_WINDOW = `
  SELECT w.name AS window, v.chain_id, count(*)::int AS count,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY v.verify_ms) AS p50,
         percentile_cont(0.95) WITHIN GROUP (ORDER BY v.verify_ms) AS p95
    FROM unnest($1::text[], $2::int[]) AS w(name, seconds)
    JOIN verifications v ON v.created_at >= now() - make_interval(secs => w.seconds)
   WHERE v.verify_ms IS NOT NULL
   GROUP BY w.name, v.chain_id`;

/** What makes a verified verification that was never settled deletable (see UNSETTLED_PAGE). */
interface UnsettledRetention {
  /** its authorization's validBefore is before this (unix seconds): it can never settle */
  validBefore: bigint;
  /** ...or it was made before this, still valid or not (a settle then asks for a new verify) */
  createdBefore: Date;
}

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

  /** Retention: a page of rejected verifications made before `before`, after `after`. */
  async rejectedPage(before: Date, after: RetentionCursor, limit: number): Promise<RetentionPage> {
    const rows = await runQuery(this.pool, { name: 'verification_rejected_page', text: REJECTED_PAGE, values: [before, after.at, after.id, limit] });
    return pageOf(rows, limit);
  }

  /** Retention: a page of verified verifications no settlement refers to that can never settle (UnsettledRetention). */
  async unsettledPage(rule: UnsettledRetention, after: RetentionCursor, limit: number): Promise<RetentionPage> {
    const madeBefore = new Date(Number(rule.validBefore) * 1000);
    const rows = await runQuery(this.pool, {
      name: 'verification_unsettled_page',
      text: UNSETTLED_PAGE,
      values: [madeBefore, after.at, after.id, limit, rule.validBefore.toString(), rule.createdBefore],
    });
    return pageOf(rows, limit);
  }

  /**
   * Retention: deletes those of `ids` that no settlement and no webhook event refers to (their events go
   * first, through WebhookEventRepository); returns how many went.
   */
  async deleteUnreferenced(ids: string[]): Promise<number> {
    return ids.length === 0 ? 0 : runCount(this.pool, { name: 'verification_delete_unreferenced', text: DELETE_UNREFERENCED, values: [ids] });
  }

  /** The status page's verify latency: count, p50 and p95 of verify_ms per window and network (aggregates only). */
  async latencyByWindow(windows: readonly StatusWindow[]): Promise<WindowLatency[]> {
    const rows = await windowRows(this.pool, 'verification_latency_by_window', LATENCY_BY_WINDOW, windows);
    return rows.map((r) => ({ window: r.window as string, chainId: r.chain_id as number, count: r.count as number, p50Ms: optionalMs(r.p50), p95Ms: optionalMs(r.p95) }));
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
  async findLatestVerified(payment: PaymentNonce & { authorizationFingerprint: string }): Promise<VerificationRow | null> {
    const { chainId, nonceSpace, payer, nonce, authorizationFingerprint } = payment;
    const rows = await runQuery(this.pool, {
      name: 'verification_latest_verified_v3',
      text: FIND_LATEST_VERIFIED,
      values: [chainId, nonceSpace, payer, nonce, authorizationFingerprint],
    });
    return rows.length > 0 ? fromColumns(rows[0]) : null;
  }
}

function pageOf(rows: Array<Record<string, unknown>>, limit: number): RetentionPage {
  const last = rows.at(-1);
  return {
    ids: rows.map((r) => r.id as string),
    next: rows.length < limit || !last ? null : { at: dateColumn(last.created_at), id: last.id as string },
  };
}
