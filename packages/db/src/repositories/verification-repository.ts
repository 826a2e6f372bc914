import type { Pool } from 'pg';
import type { PrismaClient, Verification } from '../generated/prisma/client';
import { VerificationInsertBatcher } from './verification-insert-batcher';
import { fromColumns, type NewVerificationRow } from './verification-row';

export type VerificationRow = Verification;
export type { NewVerificationRow } from './verification-row';

/** Errors of our own pg statements are the database's, whatever their shape (e.g. a refused connection). */
function tagAsDatabaseError(err: unknown): unknown {
  if (typeof err === 'object' && err !== null) (err as { dependency?: string }).dependency = 'database';
  return err;
}

const REJECT = `
  UPDATE verifications SET status = 'rejected', failure_message = $2, failure_details = $3::jsonb, updated_at = now()
  WHERE id = $1 RETURNING *`;

export class VerificationRepository {
  private readonly inserts: VerificationInsertBatcher;

  constructor(
    private readonly prisma: PrismaClient,
    /** the hot path's statements go through plain `pg` (see pg-pool.ts) */
    private readonly pool: Pool,
  ) {
    this.inserts = new VerificationInsertBatcher(pool, tagAsDatabaseError);
  }

  async create(row: NewVerificationRow): Promise<VerificationRow> {
    return (await this.inserts.insert(row)).record;
  }

  /**
   * Stores the row and reports, in the same round trip, the settlement of ours that already used the
   * row's nonce (chain, token, payer and nonce are the row's own).
   */
  createCheckingNonce(row: NewVerificationRow): Promise<{ record: VerificationRow; usedBy: string | null }> {
    return this.inserts.insert(row);
  }

  async reject(id: string, message: string, details: Record<string, unknown>): Promise<VerificationRow> {
    const { rows } = await this.query({ name: 'verification_reject', text: REJECT, values: [id, message, JSON.stringify(details)] });
    return fromColumns(rows[0]);
  }

  private async query(config: { name: string; text: string; values: unknown[] }) {
    try {
      return await this.pool.query(config);
    } catch (err) {
      throw tagAsDatabaseError(err);
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
