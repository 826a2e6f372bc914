import { createHash, randomBytes } from 'node:crypto';

/** A Standard Webhooks secret: `whsec_` and the base64 of 32 random bytes (the HMAC key is those bytes). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** A settle key: shown to the merchant once; only its SHA-256 is stored. */
export function newSettleKey(): string {
  return `fsk_${randomBytes(32).toString('base64url')}`;
}

/** What is stored and looked up for a settle key (256 random bits need no slow hash). */
export function settleKeyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}
