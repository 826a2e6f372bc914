import type { Pool } from 'pg';
import { dateColumn, runCount, runQuery } from './pg-query';

interface StoredMerchantSession {
  /** lowercase */
  merchant: string;
  expiresAt: Date;
}

/** How many expired sessions (of any merchant) each sign-in clears: bounded work, and they never pile up. */
const EXPIRED_CLEARED_PER_SIGN_IN = 100;

// A new session, and a few expired ones gone, in one statement.
const CREATE = `
  WITH expired AS (
    DELETE FROM merchant_sessions WHERE token_hash IN
      (SELECT token_hash FROM merchant_sessions WHERE expires_at <= now() LIMIT ${EXPIRED_CLEARED_PER_SIGN_IN})
  )
  INSERT INTO merchant_sessions (token_hash, merchant, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
  RETURNING expires_at`;

/**
 * The one owner of merchant_sessions: the merchant page's sign-ins, by the SHA-256 of their token (the
 * token itself is never stored). The database's clock decides expiry, as it does for merchant nonces.
 */
export class MerchantSessionRepository {
  constructor(private readonly pool: Pool) {}

  /** Stores a session good for `lifetimeSeconds`; returns when it expires. */
  async create(tokenHash: string, merchant: string, lifetimeSeconds: number): Promise<Date> {
    const [row] = await runQuery(this.pool, { name: 'merchant_session_create', text: CREATE, values: [tokenHash, merchant, lifetimeSeconds] });
    return dateColumn(row.expires_at);
  }

  /** The live session of this token hash; null when unknown, signed out or expired. */
  async findLive(tokenHash: string): Promise<StoredMerchantSession | null> {
    const [row] = await runQuery(this.pool, {
      name: 'merchant_session_find',
      text: 'SELECT merchant, expires_at FROM merchant_sessions WHERE token_hash = $1 AND expires_at > now()',
      values: [tokenHash],
    });
    return row ? { merchant: row.merchant as string, expiresAt: dateColumn(row.expires_at) } : null;
  }

  /** Signs out; false when there was no such session. */
  async delete(tokenHash: string): Promise<boolean> {
    return (await runCount(this.pool, { name: 'merchant_session_delete', text: 'DELETE FROM merchant_sessions WHERE token_hash = $1', values: [tokenHash] })) > 0;
  }
}
