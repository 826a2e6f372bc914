import { createHash, randomBytes } from 'node:crypto';
import type { MerchantSessionRepository } from '@facilitator/db';

/** How long a merchant page sign-in lasts: long enough to look around, short enough that a leak soon stops mattering. */
const MERCHANT_SESSION_SECONDS = 30 * 60;

const TOKEN_PREFIX = 'fms_';
const TOKEN = /^fms_[A-Za-z0-9_-]{43}$/;

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

interface OpenedMerchantSession {
  /** the bearer token, shown once: only its SHA-256 is stored */
  token: string;
  merchant: string;
  expiresAt: Date;
}

/**
 * The merchant page's sign-ins. A session is opened only after the merchant signed a `session.create`
 * request (MerchantService.authenticate), and serves the merchant's own reads for 30 minutes or until
 * signed out. It never authorises a change: those still need their own signed request.
 */
export class MerchantSessions {
  constructor(
    private readonly repository: MerchantSessionRepository,
    private readonly lifetimeSeconds = MERCHANT_SESSION_SECONDS,
  ) {}

  async open(merchant: string): Promise<OpenedMerchantSession> {
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const expiresAt = await this.repository.create(hashOf(token), merchant.toLowerCase(), this.lifetimeSeconds);
    return { token, merchant: merchant.toLowerCase(), expiresAt };
  }

  /** The merchant a live session belongs to; null for anything else (unknown, expired, signed out, not a token). */
  async merchantOf(token: string): Promise<string | null> {
    if (!TOKEN.test(token)) return null;
    return (await this.repository.findLive(hashOf(token)))?.merchant ?? null;
  }

  /** Signs out: the token stops working at once. */
  async close(token: string): Promise<boolean> {
    return TOKEN.test(token) && this.repository.delete(hashOf(token));
  }
}
