import type { Pool } from 'pg';
import type { PrismaClient, Verification } from '../generated/prisma/client';
import { NONCE_CONSUMING_STATES } from './settlement-repository';
import { fromColumns, valuesOf, VERIFICATION_COLUMNS, type NewVerificationRow } from './verification-row';

export type VerificationRow = Verification;
export type { NewVerificationRow } from './verification-row';

export interface PaymentIdentity {
  chainId: number;
  tokenAddress: string;
  payer: string;
  nonce: string;
}

const placeholders = VERIFICATION_COLUMNS.map((column, i) =>
  ['request', 'metadata', 'failure_details'].includes(column) ? `$${i + 1}::jsonb` : column === 'status' ? `$${i + 1}::"VerificationStatus"` : `$${i + 1}`,
).join(', ');
const n = VERIFICATION_COLUMNS.length;

// One round trip: store the verification and, in the same statement, find a settlement of ours that
// already used this payment's nonce (the spec's check 7).
const INSERT_CHECKING_NONCE = `
  WITH used AS (
    SELECT id FROM settlements
    WHERE chain_id = $${n + 1} AND token_address = $${n + 2} AND payer = $${n + 3} AND nonce = $${n + 4}
      AND (state IN (${NONCE_CONSUMING_STATES.map((s) => `'${s}'`).join(', ')}) OR merchant_paid)
    LIMIT 1
  ), inserted AS (
    INSERT INTO verifications (${VERIFICATION_COLUMNS.join(', ')}, created_at, updated_at)
    VALUES (${placeholders}, now(), now())
    RETURNING *
  )
  SELECT inserted.*, (SELECT id FROM used) AS used_by FROM inserted`;

const INSERT = `
  INSERT INTO verifications (${VERIFICATION_COLUMNS.join(', ')}, created_at, updated_at)
  VALUES (${placeholders}, now(), now())
  RETURNING *`;

const REJECT = `
  UPDATE verifications SET status = 'rejected', failure_message = $2, failure_details = $3::jsonb, updated_at = now()
  WHERE id = $1 RETURNING *`;

export class VerificationRepository {
  constructor(
    private readonly prisma: PrismaClient,
    /** the hot path's statements go through plain `pg` (see pg-pool.ts) */
    private readonly pool: Pool,
  ) {}

  async create(row: NewVerificationRow): Promise<VerificationRow> {
    const { rows } = await this.query({ name: 'verification_insert', text: INSERT, values: valuesOf(row) });
    return fromColumns(rows[0]);
  }

  /** Stores the row and reports, in the same round trip, the settlement of ours that used its nonce. */
  async createCheckingNonce(row: NewVerificationRow, payment: PaymentIdentity): Promise<{ record: VerificationRow; usedBy: string | null }> {
    const values = [...valuesOf(row), payment.chainId, payment.tokenAddress, payment.payer, payment.nonce];
    const { rows } = await this.query({ name: 'verification_insert_checking_nonce', text: INSERT_CHECKING_NONCE, values });
    return { record: fromColumns(rows[0]), usedBy: (rows[0].used_by as string | null) ?? null };
  }

  async reject(id: string, message: string, details: Record<string, unknown>): Promise<VerificationRow> {
    const { rows } = await this.query({ name: 'verification_reject', text: REJECT, values: [id, message, JSON.stringify(details)] });
    return fromColumns(rows[0]);
  }

  /** Errors of these statements are the database's, whatever their shape (e.g. a refused connection). */
  private async query(config: { name: string; text: string; values: unknown[] }) {
    try {
      return await this.pool.query(config);
    } catch (err) {
      if (typeof err === 'object' && err !== null) (err as { dependency?: string }).dependency = 'database';
      throw err;
    }
  }

  findById(id: string): Promise<VerificationRow | null> {
    return this.prisma.verification.findUnique({ where: { id } });
  }

  /** The newest successful verification of one payment: what a Form A settle refers to. */
  findLatestVerified(chainId: number, tokenAddress: string, payer: string, nonce: string): Promise<VerificationRow | null> {
    return this.prisma.verification.findFirst({
      where: { chainId, tokenAddress, payer, nonce, status: 'verified' },
      orderBy: { createdAt: 'desc' },
    });
  }
}
