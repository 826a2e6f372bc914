import type { WebhookEventRepository } from '@facilitator/db';
import type { WebhookEventMac } from './event-mac';
import { isAllowedPort } from './address-policy';
import { deliveryOutcomeOf } from './delivery-outcome';
import { LOOKUP_BUSY, type HostResolver } from './host-resolver';
import { receiverOf, type ReceiverGate } from './receiver-gate';
import { safeHttpPost, type PostResult } from './safe-http-post';
import { PREVIOUS_SIGNATURE_HEADER, signWebhookPayload, standardWebhookSignature } from './signature';

/** The spec: receivers must answer within 5 seconds. */
export const WEBHOOK_TIMEOUT_MS = 5_000;

/**
 * How long a delivery waits in line for a place at a receiver that is at its cap before it steps aside
 * (ReceiverGate.admit): long enough for a receiver answering in milliseconds to free many places, short
 * enough that deliveries queued behind a hanging receiver give their worker slots back at once.
 */
export const RECEIVER_WAIT_MS = 100;

/** The secrets that sign a merchant's events now: the current one first, then one in its grace period. */
type MerchantSigningSecrets = (merchant: string) => Promise<string[]>;

export interface WebhookDeliveryOptions {
  events: WebhookEventRepository;
  signingSecrets: MerchantSigningSecrets;
  /** checks each event row's MAC (keyed from WEBHOOK_SECRET) before anything is signed with a merchant's secret */
  eventMac: WebhookEventMac;
  /** told of an event row refused for its MAC (a database writer's row, or one stored before MACs): logged */
  onUnauthenticated?(eventId: string): void;
  allowPrivate: boolean;
  /** ports a receiver may listen on (checked again here: the URL was accepted under the config of its day) */
  allowedPorts?: readonly number[];
  timeoutMs?: number;
  /** per-receiver cap and circuit breaker; none: every delivery goes through */
  gate?: ReceiverGate;
  /** how long a delivery waits for a place at a busy receiver before it is held (RECEIVER_WAIT_MS) */
  receiverWaitMs?: number;
  /**
   * a delivery held by an open breaker for longer than this since its event last moved (created, attempted,
   * reopened) goes through anyway, within the cap: the schedule's longest delay by default
   */
  maxHoldMs?: number;
  /** the webhook hosts' resolver (c-ares, capped); the process default when unset */
  resolver?: HostResolver;
  /** the raw error of a failed attempt, for our logs (the listing shows only its category) */
  onAttemptError?(eventId: string, error: string): void;
}

export type AttemptResult =
  | { outcome: 'delivered' }
  | { outcome: 'retry'; error: string }
  | { outcome: 'failed'; error: string }
  /** not attempted (nothing sent, no attempt counted): the receiver is at its cap or its breaker is open, or no lookup slot was free */
  | { outcome: 'held'; reason: 'receiver_busy' | 'circuit_open' | 'lookup_busy'; retryAfterMs: number };

/**
 * The headers of one delivery: the spec's `x-webhook-signature` (hex HMAC of the sorted-keys payload),
 * plus Standard Webhooks' `webhook-id` (the event id), `webhook-timestamp` (this attempt, Unix seconds)
 * and `webhook-signature` (one `v1,` entry per live secret, space-separated), so the official library
 * verifies a delivery and refuses it when replayed later than its tolerance.
 */
function deliveryHeaders(eventId: string, body: string, signatures: { spec: string[]; secrets: string[] }, nowSeconds: number) {
  return {
    'x-webhook-signature': signatures.spec[0],
    ...(signatures.spec[1] ? { [PREVIOUS_SIGNATURE_HEADER]: signatures.spec[1] } : {}),
    'webhook-id': eventId,
    'webhook-timestamp': String(nowSeconds),
    'webhook-signature': signatures.secrets.map((secret) => standardWebhookSignature(eventId, nowSeconds, body, secret)).join(' '),
  };
}

/**
 * One delivery attempt of one event: POST the payload signed with its merchant's secret(s), record the
 * attempt, and say whether to try again. An event already delivered is not sent again (a job may run
 * twice after a crash). `lastAttempt`: this is the last attempt of the current round.
 */
export class WebhookDelivery {
  constructor(private readonly options: WebhookDeliveryOptions) {}

  async attempt(eventId: string, lastAttempt: boolean): Promise<AttemptResult> {
    const { events } = this.options;
    const event = await events.findWithMerchant(eventId);
    if (!event || event.status === 'delivered') return { outcome: 'delivered' };
    // numbered across redeliveries, so the history reads in order
    const attemptNumber = event.attemptCount + 1;
    // a row whose MAC does not verify was not stored by a process holding WEBHOOK_SECRET (a database writer's,
    // or one from before rows had MACs): it is neither signed with the merchant's secret nor posted anywhere
    if (!this.options.eventMac.verifies(event, event.mac)) {
      this.options.onUnauthenticated?.(eventId);
      return this.record(eventId, attemptNumber, true, { error: 'the event row has no valid MAC: not signed, not sent', errorCode: 'EUNAUTHENTICATED', durationMs: 0 });
    }
    const url = new URL(event.url);
    if (!isAllowedPort(url, { allowPrivate: this.options.allowPrivate, allowedPorts: this.options.allowedPorts })) {
      return this.record(eventId, attemptNumber, lastAttempt, { error: `port ${url.port} is not allowed`, errorCode: 'EPORTNOTALLOWED', durationMs: 0 });
    }
    // the receiver's place is taken before anything else: a held delivery costs no secret read, no lookup, no socket
    const overdueInMs = event.updatedAt.getTime() + (this.options.maxHoldMs ?? Infinity) - Date.now();
    const admission = this.options.gate
      ? await this.options.gate.admit(receiverOf(url), { overdue: overdueInMs < 0, waitMs: this.options.receiverWaitMs ?? RECEIVER_WAIT_MS })
      : { admitted: true as const, release: () => undefined };
    if (!admission.admitted) {
      // never held past the moment it may go through anyway
      return { outcome: 'held', reason: admission.reason, retryAfterMs: Math.min(admission.retryAfterMs, Math.max(0, Math.ceil(overdueInMs)) + 1) };
    }
    let result: PostResult;
    try {
      result = await this.post(url, eventId, event.payload as Record<string, unknown>, event.verification?.merchant ?? null);
    } catch (err) {
      admission.release('neutral');
      throw err;
    }
    if (result.errorCode === LOOKUP_BUSY) {
      // our resolver had no free slot: nothing reached the receiver, so neither an attempt nor the breaker moves
      admission.release('neutral');
      return { outcome: 'held', reason: 'lookup_busy', retryAfterMs: 1_000 };
    }
    // the breaker guards the slots against receivers that hang or cannot be reached: any HTTP answer (a 404
    // or a 500 too) came back and freed its slot, so it says the host is up. Counting HTTP errors would let a
    // stranger open the breaker of a host shared by many merchants with a few events to a path that is not there.
    admission.release(result.statusCode !== undefined ? 'success' : 'failure');
    return this.record(eventId, attemptNumber, lastAttempt, result);
  }

  /**
   * Signs with the merchant's secrets as they are now (read for this delivery: a rotation is seen by the
   * next delivery, never a second later) and POSTs once.
   */
  private async post(url: URL, eventId: string, stored: Record<string, unknown>, verificationMerchant: string | null): Promise<PostResult> {
    // events stored before merchant_address existed take it from their verification
    const merchant = String(stored.merchant_address ?? verificationMerchant ?? '').toLowerCase();
    const payload = { ...stored, merchant_address: merchant };
    const secrets = await this.options.signingSecrets(merchant);
    const spec = secrets.map((secret) => signWebhookPayload(payload, secret));
    const body = JSON.stringify({ ...payload, signature: spec[0] });
    const headers = { ...deliveryHeaders(eventId, body, { spec, secrets }, Math.floor(Date.now() / 1000)), 'user-agent': 'x402-facilitator-webhooks/1' };
    return safeHttpPost(url, body, headers, {
      timeoutMs: this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
      allowPrivate: this.options.allowPrivate,
      resolver: this.options.resolver,
    });
  }

  /** Records one attempt and says what follows. */
  private async record(eventId: string, attemptNumber: number, lastAttempt: boolean, result: PostResult): Promise<AttemptResult> {
    const { events } = this.options;
    const outcome = deliveryOutcomeOf(result);
    const delivered = outcome === 'delivered';
    if (!delivered && result.error) this.options.onAttemptError?.(eventId, result.error);
    const error = delivered ? undefined : outcome;
    const final = delivered || lastAttempt;
    await events.recordAttempt({
      eventId,
      number: attemptNumber,
      statusCode: result.statusCode,
      error,
      durationMs: result.durationMs,
      eventStatus: delivered ? 'delivered' : final ? 'failed' : 'pending',
    });
    if (delivered) return { outcome: 'delivered' };
    return final ? { outcome: 'failed', error: error! } : { outcome: 'retry', error: error! };
  }
}
