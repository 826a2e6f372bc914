import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header OpenZeppelin Relayer signs its notifications in (src/services/notification/mod.rs). */
export const RELAYER_SIGNATURE_HEADER = 'x-signature';

/**
 * OpenZeppelin Relayer's notification signature: base64 (standard alphabet, padded) of HMAC-SHA256 over
 * the exact request body, keyed with the notification's `signing_key` as UTF-8 bytes. No timestamp is
 * signed, so a captured notification can be replayed: receivers use one only to look again (see
 * RelayerWebhookHandler), never as the truth.
 */
export function signRelayerWebhook(rawBody: string | Buffer, signingKey: string): string {
  return createHmac('sha256', Buffer.from(signingKey, 'utf8')).update(rawBody).digest('base64');
}

/** Whether `signature` (the header's value) is the relayer's signature of `rawBody`; compared in constant time. */
export function verifyRelayerWebhook(rawBody: string | Buffer, signature: string | undefined, signingKey: string): boolean {
  if (!signature) return false;
  const expected = Buffer.from(signRelayerWebhook(rawBody, signingKey), 'base64');
  const given = Buffer.from(signature.trim(), 'base64');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
