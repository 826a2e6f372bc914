import type { Pool, PoolClient } from 'pg';
import type { PrismaClient, Settlement } from '../../generated/prisma/client';
import { inTransaction, runQuery } from '../pg-query';
import { settlementWithVerificationFromColumns, type SettlementWithVerificationRow } from '../settlement-row';

export type SettlementRow = Settlement;

const FIND_WITH_VERIFICATION = `
  SELECT s.*, to_jsonb(v) AS verification FROM settlements s JOIN verifications v ON v.id = s.verification_id WHERE s.id = $1`;

/**
 * The settlements table, read by several kinds of reader: each kind is a class of its own below (the machine's
 * store, the request side, the public lookups, accounting, finality, the pages, retention), so a process builds
 * only the ones it uses. What every reader may read of a settlement is here, once.
 */
export abstract class SettlementTable {
  constructor(
    protected readonly prisma: PrismaClient,
    /** the worker's hot path (loading and moving a settlement) goes through plain `pg` (see pg-pool.ts) */
    protected readonly pool: Pool,
  ) {}

  findById(id: string): Promise<SettlementRow | null> {
    return this.prisma.settlement.findUnique({ where: { id } });
  }

  async findWithVerification(id: string): Promise<SettlementWithVerificationRow | null> {
    const rows = await runQuery(this.pool, { name: 'settlement_with_verification', text: FIND_WITH_VERIFICATION, values: [id] });
    return rows.length > 0 ? settlementWithVerificationFromColumns(rows[0]) : null;
  }

  protected inTransaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, work);
  }
}
