import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '@facilitator/core';

/**
 * The HMAC key of a webhook secret. A Standard Webhooks secret (`whsec_` + base64) keys the HMAC with
 * its base64-decoded bytes, for both signatures, so one secret serves both checks; any other text
 * (an operator's own secret) keys it with its UTF-8 bytes.
 */
export function webhookSecretKey(secret: string): Buffer {
  if (secret.startsWith('whsec_')) {
    const encoded = secret.slice('whsec_'.length);
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return Buffer.from(encoded, 'base64');
  }
  return Buffer.from(secret, 'utf8');
}

/**
 * The spec's webhook HMAC (`x-webhook-signature`): SHA-256 keyed with the merchant's secret, hex digest,
 * over the payload serialized as JSON with keys sorted at every level and no spaces, computed WITHOUT the
 * payload's own `signature` field (it cannot sign itself). The same hex goes in the header and the body.
 */
export function signWebhookPayload(payload: Record<string, unknown>, secret: string): string {
  const { signature: _ignored, ...signed } = payload;
  return createHmac('sha256', webhookSecretKey(secret)).update(canonicalJson(signed)).digest('hex');
}

/**
 * One Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`
 * keyed with the secret's decoded bytes (https://www.standardwebhooks.com).
 */
export function standardWebhookSignature(id: string, timestampSeconds: number, body: string, secret: string): string {
  return `v1,${createHmac('sha256', webhookSecretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
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

/** The header with the spec HMAC under the previous secret, sent during a rotation's grace period. */
export const PREVIOUS_SIGNATURE_HEADER = 'x-webhook-signature-previous';

/**
 * Checks a delivery by the spec's rule with one secret, whichever of the live secrets it is: against
 * `x-webhook-signature` (the current secret, also in the body's `signature`), else, during a rotation,
 * against `x-webhook-signature-previous` (the secret before it).
 */
export function verifyWebhookHeaders(rawBody: string, headers: Record<string, string | string[] | undefined>, secret: string): WebhookCheck {
  const header = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const primary = verifyWebhookDelivery(rawBody, header('x-webhook-signature'), secret);
  if (primary.valid || primary.reason !== 'signature does not match') return primary;
  const previous = header(PREVIOUS_SIGNATURE_HEADER);
  if (previous === undefined || !/^[0-9a-f]{64}$/i.test(previous)) return primary;
  const payload = JSON.parse(rawBody) as Record<string, unknown>;
  const expected = Buffer.from(signWebhookPayload(payload, secret), 'hex');
  return timingSafeEqual(expected, Buffer.from(previous, 'hex')) ? { valid: true, payload } : primary;
}
