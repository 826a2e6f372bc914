import type { PrismaClient } from '../generated/prisma/client';

type IdempotencyClaim =
  | { kind: 'claimed' }
  | { kind: 'in_flight' }
  | { kind: 'mismatch' }
  | { kind: 'completed'; status: number; body: unknown };

/** A claim left in flight this long is taken to belong to a process that died, and may be taken over. */
const STALE_IN_FLIGHT_SECONDS = 120;

/**
 * Idempotency keys in Postgres. Claiming is one atomic statement, so two requests racing with the same
 * key can never both run; an expired key is simply claimed again.
 */
export class IdempotencyRepository {
  constructor(private readonly prisma: PrismaClient) {}

  async claim(scope: string, key: string, requestHash: string, ttlSeconds: number): Promise<IdempotencyClaim> {
    const claimed = await this.prisma.$queryRaw<Array<{ claimed: boolean }>>`
      INSERT INTO idempotency_keys (scope, key, request_hash, status, created_at, expires_at)
      VALUES (${scope}, ${key}, ${requestHash}, 'in_flight', now(), now() + make_interval(secs => ${ttlSeconds}))
      ON CONFLICT (scope, key) DO UPDATE
        SET request_hash = EXCLUDED.request_hash, status = 'in_flight', response_status = NULL,
            response_body = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
        WHERE idempotency_keys.expires_at < now()
           OR (idempotency_keys.status = 'in_flight'
               AND idempotency_keys.request_hash = EXCLUDED.request_hash
               AND idempotency_keys.created_at < now() - make_interval(secs => ${STALE_IN_FLIGHT_SECONDS}))
      RETURNING true AS claimed`;
    if (claimed.length > 0) return { kind: 'claimed' };
    const existing = await this.prisma.idempotencyKey.findUnique({ where: { scope_key: { scope, key } } });
    if (!existing) return this.claim(scope, key, requestHash, ttlSeconds);
    if (existing.requestHash !== requestHash) return { kind: 'mismatch' };
    if (existing.status === 'in_flight') return { kind: 'in_flight' };
    return { kind: 'completed', status: existing.responseStatus ?? 200, body: existing.responseBody };
  }

  async complete(scope: string, key: string, status: number, body: unknown): Promise<void> {
    await this.prisma.idempotencyKey.update({
      where: { scope_key: { scope, key } },
      data: { status: 'completed', responseStatus: status, responseBody: body as object },
    });
  }

  /** Forget a claim whose request failed on our side, so the client's retry runs for real. */
  async release(scope: string, key: string): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({ where: { scope, key, status: 'in_flight' } });
  }

  /**
   * Retention: up to `limit` keys that expired before `before` (kept a while after expiry for support),
   * oldest first; returns how many went.
   */
  deleteExpired(before: Date, limit: number): Promise<number> {
    return this.prisma.$executeRaw`
      DELETE FROM idempotency_keys k USING (
        SELECT scope, key FROM idempotency_keys WHERE expires_at < ${before} ORDER BY expires_at LIMIT ${limit}
      ) doomed
      WHERE k.scope = doomed.scope AND k.key = doomed.key AND k.expires_at < ${before}`;
  }
}
