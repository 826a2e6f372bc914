import type { DiscoveryRepository, DiscoveryResourceRow } from '@facilitator/db';
import type { DeclarationIntake } from './declaration';

/** One catalog item as the bazaar client reads it (`DiscoveryResource`), with the facilitator's own figures. */
export interface DiscoveryItem {
  resource: string;
  type: string;
  x402Version: number;
  accepts: Array<Record<string, unknown>>;
  lastUpdated: string;
  description?: string;
  mimeType?: string;
  serviceName?: string;
  tags?: string[];
  iconUrl?: string;
  extensions?: Record<string, unknown>;
  /** what only the facilitator knows; every figure counts a payer once (wash traffic from one payer is one) */
  stats: {
    /** settled payments, each payer counted once */
    paymentsSettled: number;
    lastSettled: string;
    /** the mean of each payer's settled / (settled + failed) */
    settleSuccessRate: number | null;
    /** the median of each payer's last settled amount, atomic units of accepts[0].asset */
    medianPrice: string | null;
  };
}

export interface ListQuery {
  type?: string;
  payTo?: string;
  scheme?: string;
  network?: string;
  extensions?: string;
  limit: number;
  offset: number;
}

export interface SearchQuery extends Omit<ListQuery, 'offset'> {
  query: string;
  offset: number;
}

export interface DiscoveryListAnswer {
  x402Version: 2;
  items: DiscoveryItem[];
  pagination: { limit: number; offset: number; total: number };
}

export interface DiscoverySearchAnswer {
  x402Version: 2;
  resources: DiscoveryItem[];
  partialResults: boolean;
  pagination: { limit: number; cursor: string | null };
}

/** A merchant's resource as its page shows it: listed or not, and why not. */
export interface MerchantResourceView {
  resource_key: string;
  resource: string;
  type: string;
  listed: boolean;
  /** why it is not listed: the reason and the field at fault (the latest rejected declaration) */
  rejection: { reason: string; field: string; at: string } | null;
  not_listed_because: string | null;
  payments_settled: number;
  settle_success_rate: number | null;
  median_price: string | null;
  last_settled_at: string;
}

export function itemOf(row: DiscoveryResourceRow): DiscoveryItem {
  const listing = row.listing ?? {};
  const { routeTemplate: _t, method: _m, toolName: _n, ...rest } = listing as Record<string, unknown>;
  return {
    ...(rest as Omit<DiscoveryItem, 'lastUpdated' | 'stats'>),
    lastUpdated: row.updatedAt.toISOString(),
    stats: {
      paymentsSettled: row.paymentsSettled,
      lastSettled: row.lastSettledAt.toISOString(),
      settleSuccessRate: row.settleSuccessRate,
      medianPrice: row.medianPrice,
    },
  };
}

export interface DiscoveryCatalogOptions {
  repository: Pick<DiscoveryRepository, 'recordDeclaration' | 'search' | 'ofMerchant'>;
  /** a resource not paid for this long leaves the catalog (DISCOVERY_RETENTION_DAYS) */
  retentionMs: number;
  /** answers are kept this long per distinct query */
  cacheMs?: number;
  /** distinct queries kept */
  cacheEntries?: number;
  now?: () => number;
}

/**
 * The API's side of the catalog: records a settle request's declaration for the indexer (never on the
 * payment's path: the caller does not wait for it), and answers the bazaar client's list and search from
 * Postgres, each distinct query kept a few seconds (one query per second per process, however many ask).
 */
export class DiscoveryCatalog {
  private readonly cache = new Map<string, { at: number; answer: Promise<unknown> }>();

  constructor(private readonly options: DiscoveryCatalogOptions) {}

  /** Stores the declaration for the settlement it came with; the indexer lists it once that settles. */
  async record(intake: DeclarationIntake, settlement: { id: string; merchant: string; payer: string; network: string }): Promise<void> {
    if (intake.kind === 'none') return;
    await this.options.repository.recordDeclaration({
      settlementId: settlement.id,
      merchant: settlement.merchant.toLowerCase(),
      payer: settlement.payer.toLowerCase(),
      network: settlement.network,
      resourceKey: intake.resource.key,
      resourceUrl: intake.resource.url,
      outcome: intake.kind,
      ...(intake.kind === 'rejected'
        ? { rejectedReason: intake.reason, rejectedField: intake.field }
        : { listing: intake.listing as unknown as Record<string, unknown> }),
    });
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private cached<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const now = this.now();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < (this.options.cacheMs ?? 5_000)) return hit.answer as Promise<T>;
    const answer = compute();
    if (this.cache.size >= (this.options.cacheEntries ?? 1_000)) {
      for (const [k, v] of this.cache) if (now - v.at >= (this.options.cacheMs ?? 5_000) || this.cache.size >= (this.options.cacheEntries ?? 1_000)) this.cache.delete(k);
    }
    this.cache.set(key, { at: now, answer });
    answer.catch(() => this.cache.delete(key));
    return answer;
  }

  private filterOf(q: ListQuery) {
    return {
      type: q.type,
      payTo: q.payTo,
      scheme: q.scheme,
      network: q.network,
      extension: q.extensions,
      limit: q.limit,
      offset: q.offset,
      paidSince: new Date(this.now() - this.options.retentionMs),
    };
  }

  list(q: ListQuery): Promise<DiscoveryListAnswer> {
    return this.cached(`list ${JSON.stringify(q)}`, async () => {
      const { rows, total } = await this.options.repository.search(this.filterOf(q));
      return { x402Version: 2 as const, items: rows.map(itemOf), pagination: { limit: q.limit, offset: q.offset, total } };
    });
  }

  search(q: SearchQuery): Promise<DiscoverySearchAnswer> {
    return this.cached(`search ${JSON.stringify(q)}`, async () => {
      const { rows, total } = await this.options.repository.search({ ...this.filterOf(q), query: q.query });
      const next = q.offset + rows.length;
      return {
        x402Version: 2 as const,
        resources: rows.map(itemOf),
        partialResults: next < total,
        pagination: { limit: q.limit, cursor: next < total ? String(next) : null },
      };
    });
  }

  /** Every resource of the merchant, listed or not, with the reason and field of its latest rejection. */
  async ofMerchant(merchant: string): Promise<MerchantResourceView[]> {
    const rows = await this.options.repository.ofMerchant(merchant);
    const paidSince = this.now() - this.options.retentionMs;
    return rows.map((r) => {
      const stale = r.lastSettledAt.getTime() < paidSince;
      const listed = r.listing !== null && !stale;
      return {
        resource_key: r.resourceKey,
        resource: r.resourceUrl,
        type: r.type,
        listed,
        rejection: r.rejectedReason !== null ? { reason: r.rejectedReason, field: r.rejectedField ?? '', at: (r.rejectedAt ?? r.updatedAt).toISOString() } : null,
        not_listed_because: listed
          ? null
          : stale
            ? 'not paid within the retention period'
            : r.rejectedReason !== null
              ? `${r.rejectedField}: ${r.rejectedReason}`
              : 'no valid declaration settled yet',
        payments_settled: r.paymentsSettled,
        settle_success_rate: r.settleSuccessRate,
        median_price: r.medianPrice,
        last_settled_at: r.lastSettledAt.toISOString(),
      };
    });
  }
}
