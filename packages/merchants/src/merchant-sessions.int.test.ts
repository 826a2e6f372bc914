// The merchant page's sessions against a real, migrated Postgres: a token works for its merchant until it
// expires or is signed out, only its hash is stored, and expired rows are cleared by later sign-ins.
import { randomBytes } from 'node:crypto';
import { MerchantSessionRepository } from '@facilitator/db';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { MerchantSessions } from './merchant-sessions';

let db: TestDatabase;
let sessions: MerchantSessions;

beforeAll(async () => {
  db = await createTestDatabase();
  sessions = new MerchantSessions(new MerchantSessionRepository(db.pool));
});
afterAll(async () => {
  await db?.drop();
});

const address = () => `0x${randomBytes(20).toString('hex')}`;

describe('MerchantSessions', () => {
  it('a session names its merchant (lowercase) for 30 minutes; only the token hash is stored', async () => {
    const merchant = address().toUpperCase().replace('0X', '0x');
    const opened = await sessions.open(merchant);
    expect(opened.token).toMatch(/^fms_[A-Za-z0-9_-]{43}$/);
    expect(await sessions.merchantOf(opened.token)).toBe(merchant.toLowerCase());
    const { rows } = await db.pool.query('SELECT token_hash, merchant, expires_at - created_at AS lifetime FROM merchant_sessions WHERE merchant = $1', [merchant.toLowerCase()]);
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].token_hash).not.toContain(opened.token.slice(4, 20));
    expect(rows[0].lifetime).toMatchObject({ minutes: 30 });
  });

  it('signing out ends it; an unknown, malformed or expired token names nobody', async () => {
    const opened = await sessions.open(address());
    expect(await sessions.close(opened.token)).toBe(true);
    expect(await sessions.merchantOf(opened.token)).toBeNull();
    expect(await sessions.close(opened.token)).toBe(false);
    expect(await sessions.merchantOf(`fms_${'A'.repeat(43)}`)).toBeNull();
    expect(await sessions.merchantOf("fms_'; DROP TABLE merchant_sessions; --")).toBeNull();

    const expiring = await sessions.open(address());
    await db.pool.query(`UPDATE merchant_sessions SET expires_at = now() - interval '1 second' WHERE merchant = (SELECT merchant FROM merchant_sessions ORDER BY created_at DESC LIMIT 1)`);
    expect(await sessions.merchantOf(expiring.token)).toBeNull();
  });

  it('each sign-in clears expired sessions, of any merchant', async () => {
    const stale = await Promise.all([sessions.open(address()), sessions.open(address())]);
    await db.pool.query(`UPDATE merchant_sessions SET expires_at = now() - interval '1 minute'`);
    const fresh = await sessions.open(address());
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM merchant_sessions');
    expect(rows[0].n).toBe(1);
    expect(await sessions.merchantOf(fresh.token)).not.toBeNull();
    expect(await sessions.merchantOf(stale[0].token)).toBeNull();
  });
});
