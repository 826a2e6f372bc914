// The status figures against a real, migrated Postgres: rows placed at known ages give known windows,
// counts and percentiles; and however many ask at once, one computation runs its three statements once.
import { randomBytes } from 'node:crypto';
import { IdPrefix, newId, type RpcEndpointSnapshot } from '@facilitator/core';
import { VerificationRepository, type Pool, SettlementPages } from '@facilitator/db';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { LONG_WINDOWS_MAX_AGE_MS, ServiceStatusReader, type ServiceStatusSources } from './service-status';

const BASE = 8453;
const SEPOLIA = 84532;
const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  // verifications' verify_ms at known ages (minutes ago); the last is outside every window
  for (const [minutesAgo, ms] of [[1, 10], [1, 20], [2, 30], [3, 40], [30, 100], [120, 1000], [25 * 60, 5]]) {
    await verification(BASE, minutesAgo, ms);
  }
  await verification(BASE, 1, null); // a row from before the column: not counted
  // settlements: settled 1 min ago after 2 s and after 4 s; settled 40 min ago after 10 s; failed 2 min ago; failed 3 h ago
  await settlement(BASE, { state: 'settled', settledMinutesAgo: 1, tookSeconds: 2 });
  await settlement(BASE, { state: 'settled', settledMinutesAgo: 1, tookSeconds: 4 });
  await settlement(BASE, { state: 'settled', settledMinutesAgo: 40, tookSeconds: 10 });
  await settlement(BASE, { state: 'failed', updatedMinutesAgo: 2 });
  await settlement(BASE, { state: 'failed', updatedMinutesAgo: 180 });
  // waiting now: two for gas on Base, one for a relayer on Sepolia
  await settlement(BASE, { state: 'collect_fee', waiting: ['gas_price_above_cap', 5] });
  await settlement(BASE, { state: 'collect_fee', waiting: ['gas_price_above_cap', 2] });
  await settlement(SEPOLIA, { state: 'check_allowance', waiting: ['no_funded_relayer', 1] });
});
afterAll(async () => {
  await db?.drop();
});

async function verification(chainId: number, minutesAgo: number, verifyMs: number | null): Promise<string> {
  const id = newId(IdPrefix.Verification);
  await db.pool.query(
    `INSERT INTO verifications (id, status, protocol_version, surface, chain_id, network, verify_ms, created_at, updated_at)
     VALUES ($1, 'verified', 2, 'v1', $2::int, 'eip155:' || $2::text, $3::int, now() - make_interval(mins => $4::int), now())`,
    [id, chainId, verifyMs, minutesAgo],
  );
  return id;
}

interface SettlementAt {
  state: string;
  settledMinutesAgo?: number;
  tookSeconds?: number;
  updatedMinutesAgo?: number;
  waiting?: [string, number];
}

async function settlement(chainId: number, at: SettlementAt): Promise<void> {
  const verificationId = await verification(chainId, 300, 1);
  const settled = at.settledMinutesAgo !== undefined;
  await db.pool.query(
    `INSERT INTO settlements (id, verification_id, surface, state, chain_id, token_address, payer, merchant, amount, nonce, fee_amount,
                              settled_at, created_at, updated_at, waiting_reason, waiting_since)
     VALUES ($1, $2, 'v1', $3::"SettlementState", $4, $5, $6, $7, '10000', $8, '100',
             CASE WHEN $9::bool THEN now() - make_interval(mins => $10::int) END,
             CASE WHEN $9::bool THEN now() - make_interval(mins => $10::int) - make_interval(secs => $11::int) ELSE now() - interval '6 hours' END,
             now() - make_interval(mins => $12::int), $13::text, CASE WHEN $13::text IS NOT NULL THEN now() - make_interval(mins => $14::int) END)`,
    [
      newId(IdPrefix.Settlement), verificationId, at.state, chainId, hex(20), hex(20), hex(20), hex(32),
      settled, at.settledMinutesAgo ?? 0, at.tookSeconds ?? 0, at.updatedMinutesAgo ?? at.settledMinutesAgo ?? 0,
      at.waiting?.[0] ?? null, at.waiting?.[1] ?? 0,
    ],
  );
}

/** The pool, counting the statements sent through it. */
function counted(pool: Pool): { pool: Pool; statements: () => number } {
  let statements = 0;
  const proxy = new Proxy(pool, {
    get(target, key, receiver) {
      if (key !== 'query') return Reflect.get(target, key, receiver);
      return (...args: Parameters<Pool['query']>) => {
        statements += 1;
        return (target.query as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  return { pool: proxy, statements: () => statements };
}

const ENDPOINTS: RpcEndpointSnapshot[] = [
  { chainId: BASE, endpoint: '1', up: true, answered: 10, failed: 0, latencyMs: 12.345 },
  { chainId: BASE, endpoint: '2', up: false, answered: 1, failed: 4, latencyMs: 0 },
  { chainId: SEPOLIA, endpoint: '1', up: true, answered: 3, failed: 0, latencyMs: 5 },
];

function reader(pool: Pool, overrides: Partial<ServiceStatusSources> = {}): ServiceStatusReader {
  return new ServiceStatusReader({
    networks: [
      { chainId: BASE, caip2: 'eip155:8453', maxFeePerGas: 2_000_000_000n },
      { chainId: SEPOLIA, caip2: 'eip155:84532', maxFeePerGas: 2_000_000_000n },
    ],
    verifications: new VerificationRepository(pool),
    settlements: new SettlementPages(db.prisma, pool),
    rpcEndpoints: () => ENDPOINTS,
    baseFeePerGas: async (chainId) => (chainId === BASE ? 3_000_000_000n : null),
    feeAmount: 10_000n,
    maxAgeMs: 5_000,
    ...overrides,
  });
}

it('computes per network and window: verify and settle p50/p95, success rate, waiting by reason, RPC and fees', async () => {
  const status = await reader(db.pool).current();
  expect(status.windows).toEqual(['5m', '1h', '24h']);
  const [base, sepolia] = status.networks;
  expect(base.network).toBe('eip155:8453');
  expect(base.name).toBe('Base');
  // 5m: 10, 20, 30, 40 (p50 25, p95 38.5); 1h adds 100; 24h adds 1000 and the settlements' own verifications (1 ms, 5 h ago)
  expect(base.verify['5m']).toEqual({ count: 4, p50_ms: 25, p95_ms: 38.5 });
  expect(base.verify['1h']).toEqual({ count: 5, p50_ms: 30, p95_ms: 88 });
  expect(base.verify['24h'].count).toBe(6 + 7);
  expect(base.settle['5m']).toEqual({ settled: 2, failed: 1, success_rate: 2 / 3, p50_ms: 3000, p95_ms: 3900 });
  expect(base.settle['1h']).toEqual({ settled: 3, failed: 1, success_rate: 0.75, p50_ms: 4000, p95_ms: 9400 });
  expect(base.settle['24h']).toMatchObject({ settled: 3, failed: 2, success_rate: 0.6 });
  expect(base.waiting).toEqual({ total: 2, by_reason: [{ reason: 'gas_price_above_cap', count: 2, oldest_since: expect.any(String) }] });
  expect(Date.now() - Date.parse(base.waiting.by_reason[0].oldest_since!)).toBeGreaterThanOrEqual(5 * 60_000 - 1_000);
  expect(base.rpc).toEqual({
    up: 1,
    total: 2,
    endpoints: [
      { endpoint: '1', up: true, latency_ms: 12.3, answered: 10, failed: 0 },
      { endpoint: '2', up: false, latency_ms: 0, answered: 1, failed: 4 },
    ],
  });
  expect(base.fee).toEqual({ facilitator_fee_units: '10000', base_fee_per_gas_wei: '3000000000', max_fee_per_gas_cap_wei: '2000000000', gas_above_cap: true });

  // a network with nothing in a window shows zeros and nulls, not a missing key
  expect(sepolia.verify['5m']).toEqual({ count: 0, p50_ms: null, p95_ms: null });
  expect(sepolia.settle['5m']).toEqual({ settled: 0, failed: 0, success_rate: null, p50_ms: null, p95_ms: null });
  expect(sepolia.waiting.by_reason).toEqual([{ reason: 'no_funded_relayer', count: 1, oldest_since: expect.any(String) }]);
  expect(sepolia.fee).toMatchObject({ base_fee_per_gas_wei: null, gas_above_cap: null });
});

it('runs its statements once for any number of concurrent visitors, the hour and day windows less often', async () => {
  const { pool, statements } = counted(db.pool);
  let now = Date.now();
  const status = reader(pool, { now: () => now });
  const answers = await Promise.all(Array.from({ length: 200 }, () => status.current()));
  // the 5-minute window's two aggregates, the waiting count, and the long windows' two aggregates
  expect(statements()).toBe(5);
  expect(new Set(answers).size).toBe(1);
  expect(answers[0].window_max_age_seconds).toEqual({ '5m': 5, '1h': 60, '24h': 60 });
  now += 4_000;
  await status.current();
  expect(statements()).toBe(5);
  // past twice maxAgeMs (visitors wait for the fresh figures): the short window and the waiting count again,
  // the long windows still cached
  now += 6_000;
  await Promise.all(Array.from({ length: 50 }, () => status.current()));
  expect(statements()).toBe(8);
  // past LONG_WINDOWS_MAX_AGE_MS: the long windows too
  now += LONG_WINDOWS_MAX_AGE_MS;
  await status.current();
  await status.current();
  expect(statements()).toBe(13);
});

it('a base fee read that fails is shown as unknown, not as a failed page', async () => {
  const status = await reader(db.pool, { baseFeePerGas: async () => Promise.reject(new Error('every endpoint down')) }).current();
  expect(status.networks[0].fee).toMatchObject({ base_fee_per_gas_wei: null, gas_above_cap: null });
});
