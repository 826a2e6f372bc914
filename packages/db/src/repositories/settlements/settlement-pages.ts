import { optionalDateColumn, runQuery } from '../pg-query';
import { NEWEST_FIRST, olderThan, type KeysetCursor } from '../keyset';
import { optionalMs, windowRows, type StatusWindow, type WaitingCount, type WindowSettleOutcomes } from '../status-windows';
import { SettlementTable, type SettlementRow } from './settlement-table';

// Each side reads its own partial index (migration 20261124160100_service_status) over the widest window.
const OUTCOMES_BY_WINDOW = `
  WITH w AS (SELECT * FROM unnest($1::text[], $2::int[]) AS w(name, seconds)),
  settled AS (
    SELECT w.name, s.chain_id, count(*)::int AS settled,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM s.settled_at - s.created_at) * 1000) AS p50,
           percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM s.settled_at - s.created_at) * 1000) AS p95
      FROM w JOIN settlements s ON s.settled_at IS NOT NULL AND s.settled_at >= now() - make_interval(secs => w.seconds)
     GROUP BY w.name, s.chain_id),
  failed AS (
    SELECT w.name, s.chain_id, count(*)::int AS failed
      FROM w JOIN settlements s ON s.state = 'failed' AND s.updated_at >= now() - make_interval(secs => w.seconds)
     GROUP BY w.name, s.chain_id)
  SELECT coalesce(a.name, f.name) AS window, coalesce(a.chain_id, f.chain_id) AS chain_id,
         coalesce(a.settled, 0) AS settled, coalesce(f.failed, 0) AS failed, a.p50, a.p95
    FROM settled a FULL JOIN failed f ON f.name = a.name AND f.chain_id = a.chain_id`;

const WAITING_BY_REASON = `
  SELECT chain_id, waiting_reason AS reason, count(*)::int AS count, min(waiting_since) AS oldest
    FROM settlements WHERE waiting_reason IS NOT NULL
   GROUP BY chain_id, waiting_reason`;

/** What pages show: the status page's figures, a merchant's settlements and fees, the operator's attention list. */
export class SettlementPages extends SettlementTable {
  /**
   * The status page's settle figures per window and network: settlements that settled in it (with the p50
   * and p95 of settled_at - created_at) and those that failed in it (`failed` is final: updated_at is when).
   */
  async outcomesByWindow(windows: readonly StatusWindow[]): Promise<WindowSettleOutcomes[]> {
    const rows = await windowRows(this.pool, 'settlement_outcomes_by_window', OUTCOMES_BY_WINDOW, windows);
    return rows.map((r) => ({
      window: r.window as string,
      chainId: r.chain_id as number,
      count: r.settled as number,
      failed: r.failed as number,
      p50Ms: optionalMs(r.p50),
      p95Ms: optionalMs(r.p95),
    }));
  }

  /** Settlements waiting for the chain now, per network and reason (the status page). */
  async waitingByReason(): Promise<WaitingCount[]> {
    const rows = await runQuery(this.pool, { name: 'settlement_waiting_by_reason', text: WAITING_BY_REASON, values: [] });
    return rows.map((r) => ({ chainId: r.chain_id as number, reason: r.reason as string, count: r.count as number, oldestSince: optionalDateColumn(r.oldest) }));
  }

  /** A merchant's settlements, newest first, `limit` of them after `before` (the merchant page; its own index). */
  pageOfMerchant(merchant: string, limit: number, before?: KeysetCursor): Promise<SettlementRow[]> {
    return this.prisma.settlement.findMany({ where: { merchant, ...olderThan(before) }, orderBy: NEWEST_FIRST, take: limit });
  }

  /** The fees collected from a merchant so far: their sum (token units) and how many settlements paid one. */
  async feesOfMerchant(merchant: string): Promise<{ total: string; count: number }> {
    const [row] = await runQuery(this.pool, {
      name: 'settlement_fees_of_merchant',
      text: `SELECT coalesce(sum(fee_amount::numeric), 0)::text AS total, count(*)::int AS count
               FROM settlements WHERE merchant = $1 AND fee_collected_at IS NOT NULL`,
      values: [merchant],
    });
    return { total: row.total as string, count: row.count as number };
  }

  countNeedingAttention(): Promise<number> {
    return this.prisma.settlement.count({ where: { attentionAt: { not: null } } });
  }

  findNeedingAttention(limit: number): Promise<SettlementRow[]> {
    return this.prisma.settlement.findMany({ where: { attentionAt: { not: null } }, orderBy: { attentionAt: 'asc' }, take: limit });
  }
}
