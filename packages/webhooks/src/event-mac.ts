import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '@facilitator/core';

/** What an event row's MAC covers: everything that decides what is signed with a merchant's secret and where it goes. */
export interface MacedEventFields {
  id: string;
  eventType: string;
  merchant: string | null | undefined;
  url: string;
  payload: unknown;
}

// a key of its own, derived from WEBHOOK_SECRET under this label: the secret's other use (sealing merchants'
// signing secrets, SecretBox) and this one never share a key
const LABEL = 'x402-facilitator webhook event mac v1';

/**
 * The MAC each webhook_events row carries, keyed from WEBHOOK_SECRET, computed by whichever process stores the
 * event (the API and the worker both hold the secret) and checked by the worker before it signs the event with
 * the merchant's secret and posts it. A database writer without WEBHOOK_SECRET (the API role's password, an SQL
 * injection) can insert or rewrite event rows, but cannot make the worker sign a "settlement.settled" of its own
 * making for a merchant, nor send a genuine event to another URL (issue 40, review of item 1).
 */
export class WebhookEventMac {
  private readonly key: Buffer;

  constructor(webhookSecret: string) {
    this.key = createHmac('sha256', webhookSecret).update(LABEL).digest();
  }

  of(event: MacedEventFields): string {
    const fields = canonicalJson([event.id, event.eventType, (event.merchant ?? '').toLowerCase(), event.url, event.payload]);
    return createHmac('sha256', this.key).update(fields).digest('hex');
  }

  verifies(event: MacedEventFields, mac: string | null): boolean {
    if (!mac) return false;
    const expected = Buffer.from(this.of(event));
    const given = Buffer.from(mac);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}
