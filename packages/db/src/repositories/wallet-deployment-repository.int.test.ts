// WalletDeploymentRepository against a real, migrated Postgres: reservations counted per merchant and per
// factory within the window, idempotent per settlement, and never more than the limit under concurrency.
import { randomBytes } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { WalletDeploymentRepository, type WalletDeploymentRequest } from './wallet-deployment-repository';

let db: TestDatabase;
let repo: WalletDeploymentRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new WalletDeploymentRepository(db.pool);
});
afterAll(async () => {
  await db?.drop();
});

const address = () => `0x${randomBytes(20).toString('hex')}`;
const request = (fields: Partial<WalletDeploymentRequest> = {}): WalletDeploymentRequest => ({
  settlementId: `stl_${randomBytes(8).toString('hex')}`,
  chainId: 84532,
  merchant: address(),
  factory: address(),
  wallet: address(),
  ...fields,
});
const limits = { perMerchant: 2, perFactory: 3, failedProbesPerWallet: 2, windowMs: 60_000 };

describe('WalletDeploymentRepository', () => {
  it("counts a failed probe against the wallet and the merchant, never the factory; a settlement's own reservation is not held against its probe (issue 40, 4)", async () => {
    const merchant = address();
    const factory = address();
    const wallet = address();
    const first = request({ merchant, factory, wallet });
    expect(await repo.probeAllowance(first, limits)).toEqual({ allowed: true });
    await repo.recordFailedProbe(first);
    const second = request({ merchant, factory, wallet });
    expect(await repo.probeAllowance(second, limits)).toEqual({ allowed: true });
    await repo.recordFailedProbe(second);
    // the wallet's budget is spent: its next payment runs none of its code, whatever the merchant
    expect(await repo.probeAllowance(request({ factory, wallet }), limits)).toEqual({ allowed: false, limit: 'wallet', count: 2, max: 2 });
    // the merchant's is too (two failed probes of its payments), for other wallets
    expect(await repo.probeAllowance(request({ merchant, factory }), limits)).toEqual({ allowed: false, limit: 'merchant', count: 2, max: 2 });
    // the factory's deployments are untouched: honest first-time payers of other merchants still get theirs
    for (let i = 0; i < limits.perFactory; i++) expect(await repo.reserve(request({ factory }), limits)).toEqual({ reserved: true });
    // a failed probe's row stays when its settlement's reservation is given back
    await repo.release(first.settlementId);
    expect(await repo.probeAllowance(request({ factory, wallet }), limits)).toMatchObject({ allowed: false, limit: 'wallet' });

    // a reserved settlement probes again right before sending: its own reservation does not count against it
    const other = address();
    const reserved = request({ merchant: other });
    expect(await repo.reserve(reserved, limits)).toEqual({ reserved: true });
    expect(await repo.reserve(request({ merchant: other }), limits)).toEqual({ reserved: true });
    expect(await repo.probeAllowance(reserved, limits)).toEqual({ allowed: true });
    expect(await repo.probeAllowance(request({ merchant: other }), limits)).toEqual({ allowed: false, limit: 'merchant', count: 2, max: 2 });
  });

  it("reserves up to the merchant's limit, then says which limit is reached; a settlement's own reservation holds", async () => {
    const merchant = address();
    const first = request({ merchant });
    expect(await repo.reserve(first, limits)).toEqual({ reserved: true });
    expect(await repo.reserve(request({ merchant }), limits)).toEqual({ reserved: true });
    expect(await repo.reserve(request({ merchant }), limits)).toEqual({ reserved: false, limit: 'merchant', count: 2, max: 2 });
    // asked again (a retried step): still reserved, not counted twice
    expect(await repo.reserve(first, limits)).toEqual({ reserved: true });
    // another chain is counted apart
    expect(await repo.reserve(request({ merchant, chainId: 8453 }), limits)).toEqual({ reserved: true });
  });

  it("reserves up to the factory's limit across merchants", async () => {
    const factory = address();
    for (let i = 0; i < 3; i++) expect(await repo.reserve(request({ factory }), limits)).toEqual({ reserved: true });
    expect(await repo.reserve(request({ factory }), limits)).toEqual({ reserved: false, limit: 'factory', count: 3, max: 3 });
  });

  it('counts only the window', async () => {
    const merchant = address();
    await repo.reserve(request({ merchant }), limits);
    await repo.reserve(request({ merchant }), limits);
    await db.pool.query(`UPDATE wallet_deployments SET created_at = now() - interval '2 minutes' WHERE merchant = $1`, [merchant]);
    expect(await repo.reserve(request({ merchant }), limits)).toEqual({ reserved: true });
  });

  it('deletes reservations made before a time, in batches, and keeps the newer ones (retention: they count only within the window)', async () => {
    const merchant = address();
    const [old1, old2, fresh] = [request({ merchant }), request({ merchant }), request({ merchant })];
    for (const r of [old1, old2, fresh]) await repo.reserve(r, { ...limits, perMerchant: 10 });
    await db.pool.query(`UPDATE wallet_deployments SET created_at = now() - interval '2 hours' WHERE settlement_id = ANY($1)`, [[old1.settlementId, old2.settlementId]]);
    const before = new Date(Date.now() - 3_600_000);
    expect(await repo.deleteOlderThan(before, 1)).toBe(1);
    expect(await repo.deleteOlderThan(before, 10)).toBeGreaterThanOrEqual(1);
    const { rows } = await db.pool.query('SELECT settlement_id FROM wallet_deployments WHERE merchant = $1', [merchant]);
    expect(rows.map((r: { settlement_id: string }) => r.settlement_id)).toEqual([fresh.settlementId]);
  });

  it('a released reservation (its deployment refused before anything was sent) no longer counts', async () => {
    const merchant = address();
    const [first, second] = [request({ merchant }), request({ merchant })];
    await repo.reserve(first, limits);
    await repo.reserve(second, limits);
    expect(await repo.reserve(request({ merchant }), limits)).toMatchObject({ reserved: false, limit: 'merchant' });
    await repo.release(first.settlementId);
    expect(await repo.reserve(request({ merchant }), limits)).toEqual({ reserved: true });
  });

  it('never reserves more than the limit when asked at once', async () => {
    const merchant = address();
    const results = await Promise.all(Array.from({ length: 10 }, () => repo.reserve(request({ merchant }), limits)));
    expect(results.filter((r) => r.reserved)).toHaveLength(2);
  });
});
