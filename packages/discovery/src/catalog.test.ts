import type { DiscoveryResourceRow } from '@facilitator/db';
import { DiscoveryCatalog } from './catalog';
import { DiscoveryIndexer } from './indexer';

const row = (fields: Partial<DiscoveryResourceRow> = {}): DiscoveryResourceRow => ({
  id: '1',
  merchant: '0x' + 'b'.repeat(40),
  resourceKey: 'http GET https://api.example.com/w',
  resourceUrl: 'https://api.example.com/w',
  type: 'http',
  listing: { resource: 'https://api.example.com/w', type: 'http', x402Version: 2, accepts: [], method: 'GET', routeTemplate: '/w' },
  rejectedReason: null,
  rejectedField: null,
  rejectedAt: null,
  paymentsSettled: 2,
  settleSuccessRate: 1,
  medianPrice: '10000',
  lastSettledAt: new Date('2026-11-28T00:00:00Z'),
  updatedAt: new Date('2026-11-28T00:00:00Z'),
  ...fields,
});

describe('DiscoveryCatalog', () => {
  it('answers a repeated query from memory for a few seconds, then from the repository again', async () => {
    let now = 1_000_000;
    const search = jest.fn(async () => ({ rows: [row()], total: 1 }));
    const catalog = new DiscoveryCatalog({ repository: { search, recordDeclaration: jest.fn(), ofMerchant: jest.fn() }, retentionMs: 86_400_000, cacheMs: 5_000, now: () => now });
    const q = { limit: 20, offset: 0 };
    const first = await catalog.list(q);
    await catalog.list(q);
    expect(search).toHaveBeenCalledTimes(1);
    now += 5_000;
    await catalog.list(q);
    expect(search).toHaveBeenCalledTimes(2);
    expect(first).toEqual({
      x402Version: 2,
      items: [{ resource: 'https://api.example.com/w', type: 'http', x402Version: 2, accepts: [], lastUpdated: '2026-11-28T00:00:00.000Z', stats: { paymentsSettled: 2, lastSettled: '2026-11-28T00:00:00.000Z', settleSuccessRate: 1, medianPrice: '10000' } }],
      pagination: { limit: 20, offset: 0, total: 1 },
    });
  });

  it('search pages with a cursor and says when results are partial', async () => {
    const catalog = new DiscoveryCatalog({ repository: { search: async () => ({ rows: [row()], total: 3 }), recordDeclaration: jest.fn(), ofMerchant: jest.fn() }, retentionMs: 86_400_000 });
    expect(await catalog.search({ query: 'w', limit: 1, offset: 1 })).toMatchObject({ partialResults: true, pagination: { limit: 1, cursor: '2' } });
  });

  it("gives the merchant's view: listed or not, and why", async () => {
    const now = Date.parse('2026-11-28T12:00:00Z');
    const rows = [row(), row({ listing: null, rejectedReason: 'must be string', rejectedField: 'extensions.bazaar.info.input.queryParams.q' }), row({ lastSettledAt: new Date('2026-01-01T00:00:00Z') })];
    const catalog = new DiscoveryCatalog({ repository: { search: jest.fn(), recordDeclaration: jest.fn(), ofMerchant: async () => rows }, retentionMs: 30 * 86_400_000, now: () => now });
    const view = await catalog.ofMerchant('0x' + 'b'.repeat(40));
    expect(view.map((v) => [v.listed, v.not_listed_because])).toEqual([
      [true, null],
      [false, 'extensions.bazaar.info.input.queryParams.q: must be string'],
      [false, 'not paid within the retention period'],
    ]);
  });
});

describe('DiscoveryIndexer', () => {
  const finished = (resourceUrl: string) => ({
    settlementId: 'stl_1', merchant: 'm', payer: 'p', network: 'eip155:8453', resourceKey: `http GET ${resourceUrl}`, resourceUrl, outcome: 'accepted' as const, listing: {}, state: 'settled' as const, amount: '1', settledAt: new Date(),
  });

  it('refuses a name that resolves to a private address, lists one that resolves to public ones', async () => {
    const index = jest.fn(async () => 'listed' as const);
    const claimed = [finished('https://rebind.example.com/x'), finished('https://public.example.com/x')];
    const indexer = new DiscoveryIndexer({
      repository: { claimFinished: jest.fn().mockResolvedValueOnce(claimed).mockResolvedValue([]), index },
      maxResourcesPerMerchant: 10,
      allowPrivate: false,
      resolveHost: async (host) => (host === 'rebind.example.com' ? ['93.184.215.14', '10.0.0.7'] : ['93.184.215.14']),
    });
    expect(await indexer.runOnce()).toBe(2);
    expect(index.mock.calls.map((c) => (c as unknown[])[2])).toEqual([{ field: 'resource.url', reason: 'private address refused: rebind.example.com resolves to 10.0.0.7' }, undefined]);
  });
});
