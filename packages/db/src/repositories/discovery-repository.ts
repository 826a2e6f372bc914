import { createHash } from 'node:crypto';
import type { PoolClient } from 'pg';
import type { Pool } from '../pg-pool';
import { dateColumn, inTransaction, optionalDateColumn, runCount, runQuery, type Row } from './pg-query';

/** A bazaar declaration that came with a settle request, waiting for its settlement (issue 45). */
export interface NewDiscoveryDeclaration {
  settlementId: string;
  /** lowercase payTo of the settlement */
  merchant: string;
  payer: string;
  network: string;
  resourceKey: string;
  resourceUrl: string;
  outcome: 'accepted' | 'rejected';
  rejectedReason?: string;
  rejectedField?: string;
  /** the catalog entry asked for (accepted only) */
  listing?: Record<string, unknown>;
}

/** A waiting declaration whose settlement is final: the indexer lists it (or counts the failure). */
export interface FinishedDeclaration extends NewDiscoveryDeclaration {
  state: 'settled' | 'failed';
  /** what the settlement moved (atomic units) */
  amount: string;
  settledAt: Date;
}

/** A catalog row, with the figures only a facilitator knows. */
export interface DiscoveryResourceRow {
  id: string;
  merchant: string;
  resourceKey: string;
  resourceUrl: string;
  type: string;
  listing: Record<string, unknown> | null;
  rejectedReason: string | null;
  rejectedField: string | null;
  rejectedAt: Date | null;
  /** settled payments, each payer counted once */
  paymentsSettled: number;
  settleSuccessRate: number | null;
  medianPrice: string | null;
  lastSettledAt: Date;
  updatedAt: Date;
}

export interface DiscoveryFilter {
  type?: string;
  payTo?: string;
  scheme?: string;
  network?: string;
  extension?: string;
  /** Postgres full-text query (websearch syntax) */
  query?: string;
  limit: number;
  offset: number;
  /** only resources paid since then are listed */
  paidSince: Date;
}

export interface IndexPolicy {
  /** new resources beyond this many per merchant are not stored */
  maxResourcesPerMerchant: number;
}

/** What indexing one finished declaration did. */
export type IndexOutcome = 'listed' | 'rejection_recorded' | 'failure_counted' | 'not_stored_over_cap' | 'ignored';

/** A prepared statement's name for a text built from the filters given. */
const statementId = (text: string) => createHash('sha1').update(text).digest('hex').slice(0, 16);

const resourceOf = (r: Row): DiscoveryResourceRow => ({
  id: String(r.id),
  merchant: r.merchant as string,
  resourceKey: r.resource_key as string,
  resourceUrl: r.resource_url as string,
  type: r.type as string,
  listing: (r.listing as Record<string, unknown> | null) ?? null,
  rejectedReason: (r.rejected_reason as string | null) ?? null,
  rejectedField: (r.rejected_field as string | null) ?? null,
  rejectedAt: optionalDateColumn(r.rejected_at),
  paymentsSettled: Number(r.payments_settled),
  settleSuccessRate: r.settle_success_rate == null ? null : Number(r.settle_success_rate),
  medianPrice: (r.median_price as string | null) ?? null,
  lastSettledAt: dateColumn(r.last_settled_at),
  updatedAt: dateColumn(r.updated_at),
});

const declarationOf = (r: Row): FinishedDeclaration => ({
  settlementId: r.settlement_id as string,
  merchant: r.merchant as string,
  payer: r.payer as string,
  network: r.network as string,
  resourceKey: r.resource_key as string,
  resourceUrl: r.resource_url as string,
  outcome: r.outcome as 'accepted' | 'rejected',
  rejectedReason: (r.rejected_reason as string | null) ?? undefined,
  rejectedField: (r.rejected_field as string | null) ?? undefined,
  listing: (r.listing as Record<string, unknown> | null) ?? undefined,
  state: r.state as 'settled' | 'failed',
  amount: r.amount as string,
  settledAt: dateColumn(r.finished_at),
});

// the text full-text search reads: description, service name, tags, URL, method or tool, and what info declares
const SEARCH_TEXT = `
  coalesce($1::jsonb->>'description', '') || ' ' || coalesce($1::jsonb->>'serviceName', '') || ' ' ||
  coalesce(array_to_string(ARRAY(SELECT jsonb_array_elements_text(coalesce($1::jsonb->'tags', '[]'::jsonb))), ' '), '') || ' ' ||
  coalesce($1::jsonb->>'resource', '') || ' ' || regexp_replace(coalesce($1::jsonb->>'resource', ''), '[/:._-]+', ' ', 'g') || ' ' ||
  coalesce($1::jsonb->>'toolName', '') || ' ' || left(coalesce($1::jsonb#>>'{extensions,bazaar,info}', ''), 4000)`;

const SQL = {
  insertDeclaration: `
    INSERT INTO discovery_declarations (settlement_id, merchant, payer, network, resource_key, resource_url, outcome, rejected_reason, rejected_field, listing)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
    ON CONFLICT (settlement_id) DO NOTHING`,
  // waiting declarations whose settlement is final, each claimed by one indexer (a claim older than a minute
  // is taken again: its indexer died)
  claimFinished: `
    WITH ready AS (
      SELECT d.settlement_id FROM discovery_declarations d JOIN settlements s ON s.id = d.settlement_id
       WHERE s.state IN ('settled', 'failed') AND (d.claimed_at IS NULL OR d.claimed_at < now() - interval '60 seconds')
       ORDER BY d.created_at LIMIT $1 FOR UPDATE OF d SKIP LOCKED)
    UPDATE discovery_declarations d SET claimed_at = now() FROM ready, settlements s
     WHERE d.settlement_id = ready.settlement_id AND s.id = d.settlement_id
    RETURNING d.*, s.state::text AS state, s.amount, coalesce(s.settled_at, now()) AS finished_at`,
  // declarations whose settlement is gone (retention) are never indexed
  deleteOrphans: `DELETE FROM discovery_declarations d WHERE NOT EXISTS (SELECT 1 FROM settlements s WHERE s.id = d.settlement_id) AND d.created_at < now() - interval '10 minutes'`,
  findResource: `SELECT id FROM discovery_resources WHERE merchant = $1 AND resource_key = $2 FOR UPDATE`,
  countOfMerchant: `SELECT count(*)::int AS n FROM discovery_resources WHERE merchant = $1`,
  insertResource: `
    INSERT INTO discovery_resources (merchant, resource_key, resource_url, type, last_settled_at)
    VALUES ($1, $2, $3, $4, $5) ON CONFLICT (merchant, resource_key) DO UPDATE SET merchant = EXCLUDED.merchant RETURNING id`,
  listResource: `
    UPDATE discovery_resources SET listing = $2::jsonb, resource_url = $3, type = $4,
           schemes = ARRAY(SELECT DISTINCT a->>'scheme' FROM jsonb_array_elements($2::jsonb->'accepts') a WHERE a->>'scheme' IS NOT NULL),
           networks = ARRAY(SELECT DISTINCT a->>'network' FROM jsonb_array_elements($2::jsonb->'accepts') a WHERE a->>'network' IS NOT NULL),
           extension_keys = ARRAY(SELECT jsonb_object_keys(coalesce($2::jsonb->'extensions', '{}'::jsonb))),
           search = to_tsvector('english', ${SEARCH_TEXT.replace(/\$1/g, '$2')}),
           rejected_reason = NULL, rejected_field = NULL, rejected_at = NULL,
           last_settled_at = greatest(last_settled_at, $5), updated_at = now()
     WHERE id = $1`,
  recordRejection: `
    UPDATE discovery_resources SET rejected_reason = $2, rejected_field = $3, rejected_at = now(),
           last_settled_at = greatest(last_settled_at, $4), updated_at = now()
     WHERE id = $1`,
  countPayer: `
    INSERT INTO discovery_payers (resource_id, payer, settled, failed, last_amount, last_at)
    VALUES ($1, $2, $3, $4, CASE WHEN $3 > 0 THEN $5::numeric END, $6)
    ON CONFLICT (resource_id, payer) DO UPDATE SET settled = discovery_payers.settled + EXCLUDED.settled,
           failed = discovery_payers.failed + EXCLUDED.failed,
           last_amount = coalesce(EXCLUDED.last_amount, discovery_payers.last_amount),
           last_at = greatest(discovery_payers.last_at, EXCLUDED.last_at)`,
  // every figure counts a payer once: payments settled = payers with a settled payment; the success rate is
  // the mean of each payer's own rate; the median price is over each payer's last settled amount
  restat: `
    UPDATE discovery_resources r SET payments_settled = s.payers, settle_success_rate = s.rate, median_price = s.median
      FROM (SELECT count(*) FILTER (WHERE settled > 0)::int AS payers,
                   avg(settled::float8 / nullif(settled + failed, 0)) AS rate,
                   (percentile_disc(0.5) WITHIN GROUP (ORDER BY last_amount) FILTER (WHERE settled > 0))::text AS median
              FROM discovery_payers WHERE resource_id = $1) s
     WHERE r.id = $1`,
  deleteDeclaration: `DELETE FROM discovery_declarations WHERE settlement_id = $1`,
  ofMerchant: `SELECT * FROM discovery_resources WHERE merchant = $1 ORDER BY last_settled_at DESC, id DESC LIMIT $2`,
  deleteStaleResources: `
    WITH doomed AS (SELECT id FROM discovery_resources WHERE last_settled_at < $1 ORDER BY last_settled_at LIMIT $2)
    DELETE FROM discovery_resources r USING doomed d WHERE r.id = d.id`,
  deleteStalePayers: `
    WITH doomed AS (SELECT resource_id, payer FROM discovery_payers WHERE last_at < $1 ORDER BY last_at LIMIT $2)
    DELETE FROM discovery_payers p USING doomed d WHERE p.resource_id = d.resource_id AND p.payer = d.payer`,
  deleteStaleDeclarations: `
    WITH doomed AS (SELECT settlement_id FROM discovery_declarations WHERE created_at < $1 ORDER BY created_at LIMIT $2)
    DELETE FROM discovery_declarations x USING doomed d WHERE x.settlement_id = d.settlement_id`,
};

/**
 * Owner of `discovery_declarations`, `discovery_resources` and `discovery_payers`: the x402 bazaar catalog
 * (issue 45). A declaration waits for its settlement; only a settled payment writes the catalog, for the
 * payTo it paid, and every figure ranking reads counts each payer once.
 */
export class DiscoveryRepository {
  constructor(private readonly pool: Pool) {}

  /** Stores a declaration for its settlement (once: a repeat of the settle request keeps the first). */
  async recordDeclaration(d: NewDiscoveryDeclaration): Promise<void> {
    await runQuery(this.pool, {
      name: 'discovery.insertDeclaration',
      text: SQL.insertDeclaration,
      values: [d.settlementId, d.merchant, d.payer, d.network, d.resourceKey, d.resourceUrl, d.outcome, d.rejectedReason ?? null, d.rejectedField ?? null, d.listing ? JSON.stringify(d.listing) : null],
    });
  }

  /** Up to `limit` waiting declarations whose settlement is final, claimed for this caller. */
  async claimFinished(limit: number): Promise<FinishedDeclaration[]> {
    const rows = await runQuery(this.pool, { name: 'discovery.claimFinished', text: SQL.claimFinished, values: [limit] });
    return rows.map(declarationOf);
  }

  /**
   * Applies a finished declaration, in one transaction: a settled payment lists the resource (or records
   * why it is not listed) for the payTo it paid and counts its payer; a failed one counts against an existing
   * resource's success rate only. `override` replaces an accepted declaration's outcome (e.g. its host
   * resolved to a private address). The declaration is deleted.
   */
  async index(d: FinishedDeclaration, policy: IndexPolicy, override?: { reason: string; field: string }): Promise<IndexOutcome> {
    return inTransaction(this.pool, async (client) => {
      const outcome = await this.applyIn(client, d, policy, override);
      await client.query(SQL.deleteDeclaration, [d.settlementId]);
      return outcome;
    });
  }

  private async applyIn(client: PoolClient, d: FinishedDeclaration, policy: IndexPolicy, override?: { reason: string; field: string }): Promise<IndexOutcome> {
    let [existing] = (await client.query(SQL.findResource, [d.merchant, d.resourceKey])).rows as Row[];
    if (d.state === 'failed') {
      if (!existing) return 'ignored';
      await client.query(SQL.countPayer, [existing.id, d.payer, 0, 1, null, new Date()]);
      await client.query(SQL.restat, [existing.id]);
      return 'failure_counted';
    }
    if (!existing) {
      const [{ n }] = (await client.query(SQL.countOfMerchant, [d.merchant])).rows as Array<{ n: number }>;
      if (n >= policy.maxResourcesPerMerchant) return 'not_stored_over_cap';
      const type = (d.listing?.type as string | undefined) ?? (d.resourceKey.startsWith('mcp ') ? 'mcp' : 'http');
      [existing] = (await client.query(SQL.insertResource, [d.merchant, d.resourceKey, d.resourceUrl, type, d.settledAt])).rows as Row[];
    }
    const id = existing.id;
    let outcome: IndexOutcome;
    if (d.outcome === 'accepted' && d.listing && !override) {
      await client.query(SQL.listResource, [id, JSON.stringify(d.listing), d.resourceUrl, d.listing.type ?? 'http', d.settledAt]);
      outcome = 'listed';
    } else {
      await client.query(SQL.recordRejection, [id, override?.reason ?? d.rejectedReason ?? 'rejected', override?.field ?? d.rejectedField ?? 'extensions.bazaar', d.settledAt]);
      outcome = 'rejection_recorded';
    }
    await client.query(SQL.countPayer, [id, d.payer, 1, 0, d.amount, d.settledAt]);
    await client.query(SQL.restat, [id]);
    return outcome;
  }

  /** Listed resources matching the filter, best first (payers, then the latest payment), and how many match. */
  async search(filter: DiscoveryFilter): Promise<{ rows: DiscoveryResourceRow[]; total: number }> {
    const where = ['listing IS NOT NULL', 'last_settled_at >= $1'];
    const values: unknown[] = [filter.paidSince];
    const add = (clause: (n: number) => string, value: unknown) => {
      values.push(value);
      where.push(clause(values.length));
    };
    if (filter.type !== undefined) add((n) => `type = $${n}`, filter.type);
    if (filter.payTo !== undefined) add((n) => `merchant = $${n}`, filter.payTo.toLowerCase());
    if (filter.scheme !== undefined) add((n) => `$${n} = ANY(schemes)`, filter.scheme);
    if (filter.network !== undefined) add((n) => `$${n} = ANY(networks)`, filter.network);
    if (filter.extension !== undefined) add((n) => `$${n} = ANY(extension_keys)`, filter.extension);
    let rank = '';
    if (filter.query !== undefined) {
      add((n) => `search @@ websearch_to_tsquery('english', $${n})`, filter.query);
      rank = `ts_rank(search, websearch_to_tsquery('english', $${values.length})) DESC, `;
    }
    values.push(filter.limit, filter.offset);
    const text = `
      SELECT *, count(*) OVER () AS total FROM discovery_resources WHERE ${where.join(' AND ')}
       ORDER BY ${rank}payments_settled DESC, last_settled_at DESC, id
       LIMIT $${values.length - 1} OFFSET $${values.length}`;
    const rows = await runQuery(this.pool, { name: `discovery.search.${statementId(text)}`, text, values });
    let total = rows.length > 0 ? Number(rows[0].total) : 0;
    if (rows.length === 0 && filter.offset > 0) {
      const counted = await runQuery(this.pool, { name: `discovery.count.${statementId(text)}`, text: `SELECT count(*)::int AS n FROM discovery_resources WHERE ${where.join(' AND ')}`, values: values.slice(0, -2) });
      total = Number(counted[0].n);
    }
    return { rows: rows.map(resourceOf), total };
  }

  /** Every resource of a merchant, listed or not, newest payment first (the merchant page's Discovery section). */
  async ofMerchant(merchant: string, limit = 500): Promise<DiscoveryResourceRow[]> {
    const rows = await runQuery(this.pool, { name: 'discovery.ofMerchant', text: SQL.ofMerchant, values: [merchant.toLowerCase(), limit] });
    return rows.map(resourceOf);
  }

  /**
   * Retention: resources not paid since `resourcesBefore` leave the catalog (with their payers); payers not
   * seen since then stop counting; declarations waiting since `declarationsBefore` are dropped. Each in
   * batches of `limit`; how many rows went.
   */
  async deleteStale(resourcesBefore: Date, declarationsBefore: Date, limit: number): Promise<number> {
    let removed = 0;
    for (const [name, text, before] of [
      ['discovery.deleteStaleResources', SQL.deleteStaleResources, resourcesBefore],
      ['discovery.deleteStalePayers', SQL.deleteStalePayers, resourcesBefore],
      ['discovery.deleteStaleDeclarations', SQL.deleteStaleDeclarations, declarationsBefore],
    ] as const) {
      for (;;) {
        const n = await runCount(this.pool, { name, text, values: [before, limit] });
        removed += n;
        if (n < limit) break;
      }
    }
    removed += await runCount(this.pool, { name: 'discovery.deleteOrphans', text: SQL.deleteOrphans });
    return removed;
  }
}
