import type { Pool } from 'pg';
import type { Verification } from '../generated/prisma/client';
import { NONCE_CONSUMING_STATES } from './settlement-row';
import { fromColumns, valuesOf, VERIFICATION_COLUMNS, type NewVerificationRow } from './verification-row';

const JSON_COLUMNS = new Set(['request', 'metadata', 'failure_details', 'payload']);
const ARRAY_TYPES: Record<string, string> = { status: 'text', protocol_version: 'int', chain_id: 'int', verify_ms: 'int' };

// Every row of a batch in one statement: the columns arrive as arrays (one fixed prepared statement,
// whatever the batch size), and each inserted row is returned with the settlement of ours, if any,
// that already used its nonce (the spec's check 7), and with the record, if any, that holds its
// (payer, nonce) for a DIFFERENT authorization: a live settlement, or a verified verification whose
// authorization can still execute (docs/decisions.md, "Payment identity"). Rows of the same batch do not
// see each other; the settle intake's check on the settlement is the one that cannot be raced.
const INSERT_BATCH = `
  WITH input AS (
    SELECT * FROM unnest(${VERIFICATION_COLUMNS.map((c, i) => `$${i + 1}::${ARRAY_TYPES[c] ?? 'text'}[]`).join(', ')})
      AS t(${VERIFICATION_COLUMNS.join(', ')})
  ), inserted AS (
    INSERT INTO verifications (${VERIFICATION_COLUMNS.join(', ')}, created_at, updated_at)
    SELECT ${VERIFICATION_COLUMNS.map((c) => (JSON_COLUMNS.has(c) ? `${c}::jsonb` : c === 'status' ? `${c}::"VerificationStatus"` : c)).join(', ')}, now(), now()
    FROM input
    RETURNING *
  )
  SELECT inserted.*, (
    SELECT s.id FROM settlements s
    WHERE s.chain_id = inserted.chain_id AND s.nonce_space = inserted.nonce_space
      AND s.payer = inserted.payer AND s.nonce = inserted.nonce
      AND (s.state IN (${NONCE_CONSUMING_STATES.map((s) => `'${s}'`).join(', ')}) OR s.merchant_paid)
    LIMIT 1
  ) AS used_by, (
    SELECT s.id FROM settlements s
    WHERE s.chain_id = inserted.chain_id AND s.nonce_space = inserted.nonce_space
      AND s.payer = inserted.payer AND s.nonce = inserted.nonce
      AND (s.payment_key IS NOT NULL OR s.merchant_paid)
      AND CASE WHEN s.authorization_fingerprint IS NULL
               -- a row of an older process (rolling deploy): judged by what it pays, its validity not being on it
               THEN (s.merchant, s.amount) IS DISTINCT FROM (inserted.merchant, inserted.amount)
               ELSE s.authorization_fingerprint <> inserted.authorization_fingerprint END
    UNION ALL
    SELECT v.id FROM verifications v
    WHERE v.chain_id = inserted.chain_id AND v.nonce_space = inserted.nonce_space
      AND v.payer = inserted.payer AND v.nonce = inserted.nonce AND v.status = 'verified'
      AND v.valid_before::numeric > extract(epoch FROM now())
      AND CASE WHEN v.authorization_fingerprint IS NULL
               THEN (v.merchant, v.amount, v.valid_after, v.valid_before) IS DISTINCT FROM (inserted.merchant, inserted.amount, inserted.valid_after, inserted.valid_before)
               ELSE v.authorization_fingerprint <> inserted.authorization_fingerprint END
    LIMIT 1
  ) AS held_by
  FROM inserted`;

interface Waiting {
  row: NewVerificationRow;
  resolve(result: StoredVerification): void;
  reject(err: unknown): void;
}

const MAX_BATCH = 64;

/** A stored row, with what the same statement found about its nonce. */
export interface StoredVerification {
  record: Verification;
  /** the settlement of ours that already used this payment's nonce */
  usedBy: string | null;
  /** a settlement or verification that holds this (payer, nonce) for another authorization */
  heldBy: string | null;
}

/**
 * Verifications arriving in the same turn of the event loop are stored with one multi-row INSERT.
 * At thousands of verifications per second this is most of Postgres's share of the work (measured:
 * about a third of the CPU per row of single-row statements); a lone request waits no longer than
 * it would have anyway.
 */
export class VerificationInsertBatcher {
  private waiting: Waiting[] = [];
  private scheduled = false;

  constructor(
    private readonly pool: Pool,
    /** marks errors of these statements as the database's (for a clear 503) */
    private readonly tag: (err: unknown) => unknown,
  ) {}

  insert(row: NewVerificationRow): Promise<StoredVerification> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ row, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    while (this.waiting.length > 0) void this.write(this.waiting.splice(0, MAX_BATCH));
  }

  private async write(batch: Waiting[]): Promise<void> {
    const columns = VERIFICATION_COLUMNS.map(() => [] as unknown[]);
    for (const { row } of batch) valuesOf(row).forEach((value, i) => columns[i].push(value));
    try {
      const { rows } = await this.pool.query({ name: 'verification_insert_batch', text: INSERT_BATCH, values: columns });
      const byId = new Map(rows.map((r) => [r.id as string, r]));
      for (const waiting of batch) {
        const stored = byId.get(waiting.row.id);
        if (stored) {
          waiting.resolve({ record: fromColumns(stored), usedBy: (stored.used_by as string | null) ?? null, heldBy: (stored.held_by as string | null) ?? null });
        }
        else waiting.reject(new Error(`verification ${waiting.row.id} was not stored`));
      }
    } catch (err) {
      // one row the database refuses must not fail the other requests of its turn: each is tried alone
      if (batch.length > 1) {
        for (const waiting of batch) void this.write([waiting]);
        return;
      }
      batch[0].reject(this.tag(err));
    }
  }
}
