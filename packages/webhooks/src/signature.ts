import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '@facilitator/core';

/**
 * The webhook HMAC: SHA-256 keyed with WEBHOOK_SECRET, hex digest, over the payload serialized as JSON
 * with keys sorted at every level and no spaces, computed WITHOUT the payload's own `signature` field
 * (it cannot sign itself). The same hex goes in the `x-webhook-signature` header and the body's `signature`.
 */
export function signWebhookPayload(payload: Record<string, unknown>, secret: string): string {
  const { signature: _ignored, ...signed } = payload;
  return createHmac('sha256', secret).update(canonicalJson(signed)).digest('hex');
}

export type WebhookCheck = { valid: true; payload: Record<string, unknown> } | { valid: false; reason: string };

/**
 * For receivers: checks a delivery's raw body against the header signature in constant time, and that
 * the body's own `signature` agrees. Pass the raw body text exactly as received.
 */
export function verifyWebhookDelivery(rawBody: string, headerSignature: string | undefined, secret: string): WebhookCheck {
  if (!headerSignature) return { valid: false, reason: 'missing x-webhook-signature header' };
  if (!/^[0-9a-f]{64}$/i.test(headerSignature)) return { valid: false, reason: 'x-webhook-signature is not a SHA-256 hex digest' };
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(rawBody) as Record<string, unknown>;
  } catch {
    return { valid: false, reason: 'body is not JSON' };
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return { valid: false, reason: 'body is not a JSON object' };
  const expected = Buffer.from(signWebhookPayload(payload, secret), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(headerSignature, 'hex'))) return { valid: false, reason: 'signature does not match' };
  if (payload.signature !== undefined && payload.signature !== headerSignature.toLowerCase()) {
    return { valid: false, reason: 'body signature differs from the header' };
  }
  return { valid: true, payload };
}
