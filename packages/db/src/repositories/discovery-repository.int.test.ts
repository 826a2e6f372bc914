// DiscoveryRepository against a real, migrated Postgres: a declaration waits for its settlement, only a
// settled payment lists (or records the rejection of) a resource for the payTo it paid, every figure counts a
// payer once, the per-payTo cap and retention bound what strangers can store, and search is full-text.
import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { settlementWithVerification } from '../testing/factories';
import { insertSettlementWithVerification } from '../testing/store-rows';
import { DiscoveryRepository, type NewDiscoveryDeclaration } from './discovery-repository';

let db: TestDatabase;
let repo: DiscoveryRepository;
const policy = { maxResourcesPerMerchant: 3 };

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new DiscoveryRepository(db.pool);
});
afterAll(async () => {
  await db?.drop();
});

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;

/** A settlement in `state` paid by `payer` to `merchant`, and its declaration of `url` waiting for it. */
async function paid(state: 'settled' | 'failed' | 'pending', fields: { merchant: string; payer?: string; url?: string; amount?: string; rejected?: boolean; description?: string }) {
  const id = `stl_${randomBytes(8).toString('hex')}`;
  const nonce = hex(32);
  const payer = fields.payer ?? hex(20);
  const amount = fields.amount ?? '10000';
  await insertSettlementWithVerification(
    db.pool,
    settlementWithVerification({ id, verificationId: `ver_${id}`, state, payer, merchant: fields.merchant, amount, nonce, paymentKey: `84532:t:${payer}:${nonce}`, settledAt: state === 'settled' ? new Date() : null }),
  );
  const url = fields.url ?? 'https://api.example.com/weather';
  const declaration: NewDiscoveryDeclaration = {
    settlementId: id,
    merchant: fields.merchant,
    payer,
    network: 'eip155:84532',
    resourceKey: `http GET ${url}`,
    resourceUrl: url,
    ...(fields.rejected
      ? { outcome: 'rejected', rejectedReason: 'must be string', rejectedField: 'extensions.bazaar.info.input.queryParams.city' }
      : {
          outcome: 'accepted',
          listing: {
            resource: url,
            type: 'http',
            x402Version: 2,
            description: fields.description ?? 'Hourly weather forecast',
            tags: ['weather'],
            accepts: [{ scheme: 'exact', network: 'eip155:84532', amount, payTo: fields.merchant }],
            extensions: { bazaar: { info: { input: { type: 'http', method: 'GET' } }, schema: {} } },
          },
        }),
  };
  await repo.recordDeclaration(declaration);
  return { id, payer };
}

const indexAll = async () => {
  const outcomes = [];
  for (const d of await repo.claimFinished(100)) outcomes.push(await repo.index(d, policy));
  return outcomes;
};
const since = new Date(Date.now() - 86_400_000);
const page = { limit: 20, offset: 0, paidSince: since };

describe('DiscoveryRepository', () => {
  it('lists a resource only once a payment to it settled, for the payTo paid', async () => {
    const merchant = hex(20);
    await paid('pending', { merchant, url: 'https://pending.example.com/a' });
    await paid('failed', { merchant, url: 'https://failed.example.com/a' });
    expect(await indexAll()).toEqual(['ignored']);
    expect((await repo.search({ ...page, payTo: merchant })).rows).toEqual([]);
    await paid('settled', { merchant, url: 'https://paid.example.com/a' });
    expect(await indexAll()).toEqual(['listed']);
    const { rows, total } = await repo.search({ ...page, payTo: merchant });
    expect(total).toBe(1);
    expect(rows[0]).toMatchObject({ merchant, resourceUrl: 'https://paid.example.com/a', paymentsSettled: 1, settleSuccessRate: 1, medianPrice: '10000' });
    // the pending one still waits for its settlement
    expect(await db.pool.query('SELECT count(*)::int AS n FROM discovery_declarations WHERE merchant = $1', [merchant]).then((r) => r.rows[0].n)).toBe(1);
  });

  it('counts a payer once: wash traffic from one payer is one payment, one rate, one price', async () => {
    const merchant = hex(20);
    const url = 'https://wash.example.com/a';
    const washer = hex(20);
    for (let i = 0; i < 5; i++) await paid('settled', { merchant, payer: washer, url, amount: '1' });
    await paid('settled', { merchant, url, amount: '30000' });
    await paid('settled', { merchant, url, amount: '20000' });
    const loser = hex(20);
    await indexAll();
    await paid('failed', { merchant, payer: loser, url });
    await indexAll();
    const [row] = (await repo.search({ ...page, payTo: merchant })).rows;
    // three payers settled (the washer once); the loser's rate 0 against three of 1
    expect(row).toMatchObject({ paymentsSettled: 3, medianPrice: '20000' });
    expect(row.settleSuccessRate).toBeCloseTo(0.75);
  });

  it('records a rejection for the merchant without listing; a later valid declaration lists it and clears the rejection', async () => {
    const merchant = hex(20);
    await paid('settled', { merchant, url: 'https://r.example.com/a', rejected: true });
    expect(await indexAll()).toEqual(['rejection_recorded']);
    expect((await repo.search({ ...page, payTo: merchant })).rows).toEqual([]);
    expect(await repo.ofMerchant(merchant)).toEqual([expect.objectContaining({ listing: null, rejectedField: 'extensions.bazaar.info.input.queryParams.city', rejectedReason: 'must be string' })]);
    await paid('settled', { merchant, url: 'https://r.example.com/a' });
    expect(await indexAll()).toEqual(['listed']);
    expect(await repo.ofMerchant(merchant)).toEqual([expect.objectContaining({ rejectedReason: null, paymentsSettled: 2 })]);
  });

  it('stores at most maxResourcesPerMerchant resources per payTo', async () => {
    const merchant = hex(20);
    for (let i = 0; i < 6; i++) await paid('settled', { merchant, url: `https://flood.example.com/${i}` });
    const outcomes = await indexAll();
    expect(outcomes.filter((o) => o === 'listed')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'not_stored_over_cap')).toHaveLength(3);
    expect(await repo.ofMerchant(merchant)).toHaveLength(3);
  });

  it('searches with Postgres full text and filters by type, scheme, network and extension', async () => {
    const merchant = hex(20);
    await paid('settled', { merchant, url: 'https://sub.example.com/dive', description: 'Submarine depth charts' });
    await indexAll();
    expect((await repo.search({ ...page, query: 'submarines depth' })).rows.map((r) => r.resourceUrl)).toEqual(['https://sub.example.com/dive']);
    expect((await repo.search({ ...page, query: 'submarine', network: 'eip155:8453' })).rows).toEqual([]);
    expect((await repo.search({ ...page, query: 'submarine', scheme: 'exact', extension: 'bazaar', type: 'http' })).rows).toHaveLength(1);
    expect((await repo.search({ ...page, query: 'submarine', extension: 'payment-identifier' })).rows).toEqual([]);
  });

  it('retention: a resource not paid since the cutoff leaves the catalog with its payers', async () => {
    const merchant = hex(20);
    await paid('settled', { merchant, url: 'https://old.example.com/a' });
    await indexAll();
    await db.pool.query(`UPDATE discovery_resources SET last_settled_at = now() - interval '40 days' WHERE merchant = $1`, [merchant]);
    expect((await repo.search({ ...page, payTo: merchant })).rows).toEqual([]);
    await repo.deleteStale(new Date(Date.now() - 30 * 86_400_000), new Date(Date.now() - 86_400_000), 1000);
    expect(await repo.ofMerchant(merchant)).toEqual([]);
  });
});
