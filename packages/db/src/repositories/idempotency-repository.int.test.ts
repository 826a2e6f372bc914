// Round trip of IdempotencyRepository against a real, migrated Postgres: keys claimed, completed, replayed,
// released and expired through the repository.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { IdempotencyRepository } from './idempotency-repository';

let db: TestDatabase;
let repo: IdempotencyRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new IdempotencyRepository(db.prisma);
});

afterAll(async () => {
  await db?.drop();
});

const TTL = 3_600;
const hash = () => randomBytes(32).toString('hex');
/** a scope of its own per test, so no test sees another's keys */
const newScope = () => `settle:key:${randomBytes(8).toString('hex')}`;

/** Moves a key's times into the past, as if it had been claimed `seconds` ago (same TTL). */
async function age(scope: string, key: string, seconds: number): Promise<void> {
  await db.pool.query(
    `UPDATE idempotency_keys SET created_at = created_at - make_interval(secs => $3), expires_at = expires_at - make_interval(secs => $3)
      WHERE scope = $1 AND key = $2`,
    [scope, key, seconds],
  );
}

async function storedRow(scope: string, key: string) {
  return db.prisma.idempotencyKey.findUnique({ where: { scope_key: { scope, key } } });
}

describe('IdempotencyRepository', () => {
  it('claims a new key once; the same request again is in flight, another request a mismatch', async () => {
    const scope = newScope();
    const h = hash();
    expect(await repo.claim(scope, 'k1', h, TTL)).toEqual({ kind: 'claimed' });
    expect(await repo.claim(scope, 'k1', h, TTL)).toEqual({ kind: 'in_flight' });
    expect(await repo.claim(scope, 'k1', hash(), TTL)).toEqual({ kind: 'mismatch' });

    const row = await storedRow(scope, 'k1');
    expect(row).toMatchObject({ requestHash: h, status: 'in_flight', responseStatus: null, responseBody: null });
    expect(row!.expiresAt.getTime() - row!.createdAt.getTime()).toBe(TTL * 1_000);
  });

  it('scopes keys: the same key in another scope is a separate claim', async () => {
    const h = hash();
    const key = 'shared-key';
    expect(await repo.claim(newScope(), key, h, TTL)).toEqual({ kind: 'claimed' });
    expect(await repo.claim(newScope(), key, hash(), TTL)).toEqual({ kind: 'claimed' });
  });

  it('lets exactly one of many concurrent claims of one key win', async () => {
    const scope = newScope();
    const h = hash();
    const results = await Promise.all(Array.from({ length: 10 }, () => repo.claim(scope, 'race', h, TTL)));
    expect(results.filter((r) => r.kind === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r.kind === 'in_flight')).toHaveLength(9);
  });

  it('replays a completed answer, status and JSON body as stored, to the same request only', async () => {
    const scope = newScope();
    const h = hash();
    const body = { success: true, transaction: `0x${'ab'.repeat(32)}`, amount: (2n ** 255n).toString(), nested: [1, null, { ok: false }], text: 'é ✓' };
    await repo.claim(scope, 'k', h, TTL);
    await repo.complete(scope, 'k', 201, body);

    expect(await repo.claim(scope, 'k', h, TTL)).toStrictEqual({ kind: 'completed', status: 201, body });
    expect(await repo.claim(scope, 'k', hash(), TTL)).toEqual({ kind: 'mismatch' });
    expect(await storedRow(scope, 'k')).toMatchObject({ status: 'completed', responseStatus: 201, responseBody: body });
  });

  it('replays non-object JSON bodies (arrays, strings, null) as stored', async () => {
    const scope = newScope();
    const h = hash();
    await repo.claim(scope, 'null', h, TTL);
    await repo.complete(scope, 'null', 204, null);
    await repo.claim(scope, 'array', h, TTL);
    await repo.complete(scope, 'array', 200, [{ id: 1 }, 'two']);
    await repo.claim(scope, 'string', h, TTL);
    await repo.complete(scope, 'string', 422, 'plain');

    expect(await repo.claim(scope, 'array', h, TTL)).toStrictEqual({ kind: 'completed', status: 200, body: [{ id: 1 }, 'two'] });
    expect(await repo.claim(scope, 'string', h, TTL)).toStrictEqual({ kind: 'completed', status: 422, body: 'plain' });
    expect(await repo.claim(scope, 'null', h, TTL)).toStrictEqual({ kind: 'completed', status: 204, body: null });
  });

  it('complete of a key never claimed fails', async () => {
    await expect(repo.complete(newScope(), 'never', 200, {})).rejects.toThrow();
  });

  it('release frees an in-flight claim so the retry runs, and never a completed one', async () => {
    const scope = newScope();
    const h = hash();
    await repo.claim(scope, 'failed', h, TTL);
    await repo.release(scope, 'failed');
    expect(await storedRow(scope, 'failed')).toBeNull();
    expect(await repo.claim(scope, 'failed', hash(), TTL)).toEqual({ kind: 'claimed' });

    await repo.claim(scope, 'done', h, TTL);
    await repo.complete(scope, 'done', 200, { ok: true });
    await repo.release(scope, 'done');
    expect(await repo.claim(scope, 'done', h, TTL)).toEqual({ kind: 'completed', status: 200, body: { ok: true } });

    // releasing what is not there is not an error
    await expect(repo.release(scope, 'absent')).resolves.toBeUndefined();
  });

  it('claims an expired key again, whatever the request, clearing the stored answer', async () => {
    const scope = newScope();
    await repo.claim(scope, 'k', hash(), 0);
    await repo.complete(scope, 'k', 200, { first: true });
    await sleep(10);

    const h2 = hash();
    expect(await repo.claim(scope, 'k', h2, TTL)).toEqual({ kind: 'claimed' });
    expect(await storedRow(scope, 'k')).toMatchObject({ requestHash: h2, status: 'in_flight', responseStatus: null, responseBody: null });
    expect(await repo.claim(scope, 'k', h2, TTL)).toEqual({ kind: 'in_flight' });
  });

  it('takes over a claim left in flight for over two minutes by the same request only', async () => {
    const scope = newScope();
    const h = hash();
    await repo.claim(scope, 'stale', h, TTL);
    await age(scope, 'stale', 119);
    expect(await repo.claim(scope, 'stale', h, TTL)).toEqual({ kind: 'in_flight' });

    await age(scope, 'stale', 2);
    expect(await repo.claim(scope, 'stale', hash(), TTL)).toEqual({ kind: 'mismatch' });
    expect(await repo.claim(scope, 'stale', h, TTL)).toEqual({ kind: 'claimed' });
    // taken over: a fresh claim, in flight again from now
    expect(await repo.claim(scope, 'stale', h, TTL)).toEqual({ kind: 'in_flight' });
    const row = await storedRow(scope, 'stale');
    expect(Date.now() - row!.createdAt.getTime()).toBeLessThan(60_000);
  });

  it('never takes over an old completed key before it expires', async () => {
    const scope = newScope();
    const h = hash();
    await repo.claim(scope, 'old', h, TTL);
    await repo.complete(scope, 'old', 200, { ok: 1 });
    await age(scope, 'old', 600);
    expect(await repo.claim(scope, 'old', h, TTL)).toEqual({ kind: 'completed', status: 200, body: { ok: 1 } });
  });

  describe('deleteExpired', () => {
    it('deletes the keys that expired before the given time, and only those', async () => {
      const scope = newScope();
      for (const key of ['a', 'b', 'c']) await repo.claim(scope, key, hash(), TTL);
      await repo.complete(scope, 'b', 200, {});
      // expired in 1970 + a few seconds: older than anything another test left behind
      await db.pool.query(`UPDATE idempotency_keys SET expires_at = to_timestamp($2) WHERE scope = $1 AND key = ANY($3::text[])`, [scope, 5, ['a', 'b']]);

      expect(await repo.deleteExpired(new Date(10_000), 1000)).toBe(2);
      expect(await storedRow(scope, 'a')).toBeNull();
      expect(await storedRow(scope, 'b')).toBeNull();
      expect(await storedRow(scope, 'c')).not.toBeNull();
      expect(await repo.deleteExpired(new Date(10_000), 1000)).toBe(0);
    });

    it('deletes the ones expired before now', async () => {
      const scope = newScope();
      await repo.claim(scope, 'short', hash(), 0);
      await repo.claim(scope, 'long', hash(), TTL);
      await sleep(10);

      expect(await repo.deleteExpired(new Date(), 1000)).toBeGreaterThanOrEqual(1);
      expect(await storedRow(scope, 'short')).toBeNull();
      expect(await storedRow(scope, 'long')).not.toBeNull();
    });
  });
});
