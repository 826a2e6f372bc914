import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AttemptRecord, WebhookEventRepository, WebhookEventWithMerchant } from '@facilitator/db';
import { PREVIOUS_SIGNATURE_HEADER, signWebhookPayload, verifyWebhookHeaders } from './signature';
import { ReceiverGate } from './receiver-gate';
import { WebhookDelivery, type WebhookDeliveryOptions } from './webhook-delivery';
import { WebhookEventMac } from './event-mac';

// One delivery attempt against an in-memory event store and a receiver on loopback (no other service):
// what is sent, what is recorded, and how each outcome maps to delivered / retry / failed.

const MERCHANT = '0x' + 'aa'.repeat(20);
const SECRET = 'whsec_' + Buffer.from('current-secret-of-the-merchant').toString('base64');
const PREVIOUS = 'whsec_' + Buffer.from('previous-secret-of-the-merchant').toString('base64');

const EVENT_MAC = new WebhookEventMac('the deployment webhook secret');

/** A stored event, with the MAC its writer computed over it (unless the test gives one). */
function eventRow(fields: Partial<WebhookEventWithMerchant> = {}): WebhookEventWithMerchant {
  const at = new Date('2024-05-01T10:00:00.000Z');
  const row: WebhookEventWithMerchant = {
    id: 'evt_1',
    eventType: 'settlement.completed',
    verificationId: 'ver_1',
    settlementId: 'stl_1',
    merchant: MERCHANT,
    url: 'http://127.0.0.1:1/hook',
    payload: { event_type: 'settlement.completed', settlement_id: 'stl_1', merchant_address: MERCHANT },
    status: 'pending',
    attemptCount: 2,
    deliveredAt: null,
    createdAt: at,
    updatedAt: at,
    verification: { merchant: MERCHANT },
    mac: null,
    ...fields,
  };
  return 'mac' in fields ? row : { ...row, mac: EVENT_MAC.of(row) };
}

/** The webhook_events table of one event, in memory. */
function fakeEvents(event: WebhookEventWithMerchant | null) {
  const attempts: AttemptRecord[] = [];
  const events = {
    findWithMerchant: async (id: string) => (event && event.id === id ? event : null),
    recordAttempt: async (attempt: AttemptRecord) => {
      attempts.push(attempt);
    },
  };
  // the delivery uses these two methods of the repository (a class over Prisma)
  return { events: events as unknown as WebhookEventRepository, attempts };
}

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1 answering `status` (or never, for null). */
async function receiver(status: number | null) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      if (status !== null) res.writeHead(status).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    received,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

let closeReceiver: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeReceiver?.();
  closeReceiver = undefined;
});

function setup(event: WebhookEventWithMerchant | null, options: Partial<WebhookDeliveryOptions> = {}) {
  const { events, attempts } = fakeEvents(event);
  const secretsAskedFor: string[] = [];
  const attemptErrors: Array<[string, string]> = [];
  const unauthenticated: string[] = [];
  const delivery = new WebhookDelivery({
    events,
    eventMac: EVENT_MAC,
    onUnauthenticated: (eventId) => unauthenticated.push(eventId),
    signingSecrets: async (merchant) => {
      secretsAskedFor.push(merchant);
      return [SECRET];
    },
    allowPrivate: true,
    onAttemptError: (eventId, error) => attemptErrors.push([eventId, error]),
    ...options,
  });
  return { delivery, attempts, secretsAskedFor, attemptErrors, unauthenticated };
}

/** A URL on a loopback port nothing listens on: every connection is refused at once. */
async function refusingUrl(): Promise<string> {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return `http://127.0.0.1:${port}/hook`;
}

async function receiverAt(status: number | null) {
  const r = await receiver(status);
  closeReceiver = r.close;
  return r;
}

describe('WebhookDelivery.attempt', () => {
  it('delivers on a 2xx: signed body and headers, the attempt numbered after the earlier ones', async () => {
    const r = await receiverAt(204);
    const { delivery, attempts, secretsAskedFor, attemptErrors } = setup(eventRow({ url: r.url }));
    await expect(delivery.attempt('evt_1', false)).resolves.toEqual({ outcome: 'delivered' });

    expect(attempts).toEqual([{ eventId: 'evt_1', number: 3, statusCode: 204, error: undefined, durationMs: expect.any(Number), eventStatus: 'delivered' }]);
    expect(secretsAskedFor).toEqual([MERCHANT]);
    expect(attemptErrors).toEqual([]);

    expect(r.received).toHaveLength(1);
    const [{ headers, body }] = r.received;
    const payload = { event_type: 'settlement.completed', settlement_id: 'stl_1', merchant_address: MERCHANT };
    const signature = signWebhookPayload(payload, SECRET);
    expect(JSON.parse(body)).toEqual({ ...payload, signature });
    expect(headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'x402-facilitator-webhooks/1',
      'x-webhook-signature': signature,
      'webhook-id': 'evt_1',
      'webhook-timestamp': expect.stringMatching(/^[0-9]{10}$/),
      'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/),
    });
    expect(headers).not.toHaveProperty(PREVIOUS_SIGNATURE_HEADER);
    expect(verifyWebhookHeaders(body, headers, SECRET)).toEqual({ valid: true, payload: { ...payload, signature } });
  });

  it('signs with the previous secret too during a rotation', async () => {
    const r = await receiverAt(200);
    const { delivery } = setup(eventRow({ url: r.url }), { signingSecrets: async () => [SECRET, PREVIOUS] });
    await delivery.attempt('evt_1', false);
    const [{ headers, body }] = r.received;
    expect(String(headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(headers[PREVIOUS_SIGNATURE_HEADER]).toBe(signWebhookPayload(JSON.parse(body), PREVIOUS));
    expect(verifyWebhookHeaders(body, headers, PREVIOUS)).toMatchObject({ valid: true });
  });

  it('takes the merchant of an older event from its verification, lowercased', async () => {
    const r = await receiverAt(200);
    const { delivery, secretsAskedFor } = setup(
      eventRow({ url: r.url, payload: { event_type: 'verification.completed' }, verification: { merchant: '0x' + 'AB'.repeat(20) } }),
    );
    await delivery.attempt('evt_1', false);
    expect(secretsAskedFor).toEqual(['0x' + 'ab'.repeat(20)]);
    expect(JSON.parse(r.received[0].body).merchant_address).toBe('0x' + 'ab'.repeat(20));
  });

  it('asks for a retry on an HTTP error before the last attempt, leaving the event pending', async () => {
    const r = await receiverAt(503);
    const { delivery, attempts, attemptErrors } = setup(eventRow({ url: r.url }));
    await expect(delivery.attempt('evt_1', false)).resolves.toEqual({ outcome: 'retry', error: 'http_503' });
    expect(attempts).toEqual([{ eventId: 'evt_1', number: 3, statusCode: 503, error: 'http_503', durationMs: expect.any(Number), eventStatus: 'pending' }]);
    // a status code is no socket error: nothing to log
    expect(attemptErrors).toEqual([]);
  });

  it('fails the event for good on the last attempt', async () => {
    const r = await receiverAt(500);
    const { delivery, attempts } = setup(eventRow({ url: r.url }));
    await expect(delivery.attempt('evt_1', true)).resolves.toEqual({ outcome: 'failed', error: 'http_500' });
    expect(attempts.map((a) => [a.error, a.eventStatus])).toEqual([['http_500', 'failed']]);
  });

  it('counts a receiver that does not answer in time as a timeout', async () => {
    const r = await receiverAt(null);
    const { delivery, attempts, attemptErrors } = setup(eventRow({ url: r.url }), { timeoutMs: 100 });
    await expect(delivery.attempt('evt_1', false)).resolves.toEqual({ outcome: 'retry', error: 'timeout' });
    expect(attempts.map((a) => [a.statusCode, a.error, a.eventStatus])).toEqual([[undefined, 'timeout', 'pending']]);
    expect(attemptErrors).toEqual([['evt_1', 'no answer within 100 ms']]);
  });

  it('refuses a port outside WEBHOOK_ALLOWED_PORTS without connecting', async () => {
    const { delivery, attempts, attemptErrors } = setup(eventRow({ url: 'https://receiver.example:8443/hook' }), { allowPrivate: false, allowedPorts: [443] });
    await expect(delivery.attempt('evt_1', true)).resolves.toEqual({ outcome: 'failed', error: 'port_not_allowed' });
    expect(attempts).toEqual([{ eventId: 'evt_1', number: 3, statusCode: undefined, error: 'port_not_allowed', durationMs: 0, eventStatus: 'failed' }]);
    expect(attemptErrors).toEqual([['evt_1', 'port 8443 is not allowed']]);
  });

  it('refuses a private address without connecting, recording only the category', async () => {
    const { delivery, attempts, attemptErrors } = setup(eventRow({ url: 'http://127.0.0.1/hook' }), { allowPrivate: false });
    await expect(delivery.attempt('evt_1', false)).resolves.toEqual({ outcome: 'retry', error: 'refused' });
    expect(attempts.map((a) => a.error)).toEqual(['refused']);
    expect(attemptErrors).toEqual([['evt_1', 'refused to connect to non-public address 127.0.0.1']]);
  });

  // issue 40 (review): webhook_events is writable by the API's database role; a writer without WEBHOOK_SECRET
  // must not get an event of its own making signed with a merchant's secret, nor a genuine one sent elsewhere
  it('signs and sends no event row without a valid MAC: forged, rewritten to another URL, or stored before MACs', async () => {
    const r = await receiverAt(204);
    const forged = eventRow({ url: r.url, mac: null, payload: { event_type: 'settlement.settled', settlement_id: 'stl_never', merchant_address: MERCHANT } });
    const genuine = eventRow({ url: 'http://127.0.0.1:1/merchant-hook' });
    const redirected = { ...genuine, url: r.url };
    const wrongKey = eventRow({ url: r.url, mac: new WebhookEventMac('another secret').of(eventRow({ url: r.url })) });
    for (const event of [forged, redirected, wrongKey]) {
      const { delivery, attempts, secretsAskedFor, unauthenticated } = setup(event);
      await expect(delivery.attempt('evt_1', false)).resolves.toEqual({ outcome: 'failed', error: 'unauthenticated' });
      expect(attempts).toEqual([{ eventId: 'evt_1', number: 3, statusCode: undefined, error: 'unauthenticated', durationMs: 0, eventStatus: 'failed' }]);
      expect(secretsAskedFor).toEqual([]);
      expect(unauthenticated).toEqual(['evt_1']);
    }
    expect(r.received).toHaveLength(0);
  });

  it('sends an event already delivered no second time (a job run twice after a crash)', async () => {
    const r = await receiverAt(200);
    const { delivery, attempts, secretsAskedFor } = setup(eventRow({ url: r.url, status: 'delivered' }));
    await expect(delivery.attempt('evt_1', false)).resolves.toEqual({ outcome: 'delivered' });
    expect([r.received, attempts, secretsAskedFor]).toEqual([[], [], []]);
  });

  it('treats an event that no longer exists (purged) as done', async () => {
    const { delivery, attempts } = setup(null);
    await expect(delivery.attempt('evt_gone', false)).resolves.toEqual({ outcome: 'delivered' });
    expect(attempts).toEqual([]);
  });
});

describe('WebhookDelivery with a receiver gate', () => {
  const gate = (overrides: Partial<ConstructorParameters<typeof ReceiverGate>[0]> = {}) =>
    new ReceiverGate({ maxPerReceiver: 2, breakerFailures: 2, breakerCooldownMs: 60_000, maxCooldownMs: 60_000, probeMs: 300, ...overrides });

  it('a never-answering receiver holds at most the cap; the rest are held without a POST, an attempt or a secret read', async () => {
    const r = await receiverAt(null);
    const { delivery, attempts, secretsAskedFor } = setup(eventRow({ url: r.url }), { gate: gate(), timeoutMs: 300 });
    const results = await Promise.all([1, 2, 3, 4].map(() => delivery.attempt('evt_1', false)));
    expect(results.filter((x) => x.outcome === 'retry')).toHaveLength(2);
    expect(results.filter((x) => x.outcome === 'held')).toEqual([
      { outcome: 'held', reason: 'receiver_busy', retryAfterMs: expect.any(Number) },
      { outcome: 'held', reason: 'receiver_busy', retryAfterMs: expect.any(Number) },
    ]);
    expect(r.received).toHaveLength(2);
    expect(attempts).toHaveLength(2);
    expect(secretsAskedFor).toHaveLength(2);
  });

  it('after the breaker opens (a receiver that cannot be reached), deliveries are held for the cool-down without connecting', async () => {
    const url = await refusingUrl();
    const { delivery, attempts } = setup(eventRow({ url, updatedAt: new Date() }), { gate: gate(), maxHoldMs: 3_600_000 });
    expect(await delivery.attempt('evt_1', false)).toEqual({ outcome: 'retry', error: 'refused' });
    await delivery.attempt('evt_1', false);
    const held = await delivery.attempt('evt_1', false);
    expect(held).toEqual({ outcome: 'held', reason: 'circuit_open', retryAfterMs: expect.any(Number) });
    expect((held as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(59_000);
    expect(attempts).toHaveLength(2);
  });

  it('HTTP errors never open the breaker: a stranger answering 404 (or a 500) from a host shared by many merchants cannot hold their deliveries', async () => {
    const r = await receiverAt(404);
    const { delivery, attempts } = setup(eventRow({ url: r.url, updatedAt: new Date() }), { gate: gate(), maxHoldMs: 3_600_000 });
    for (let i = 0; i < 5; i++) expect(await delivery.attempt('evt_1', false)).toEqual({ outcome: 'retry', error: 'http_404' });
    expect(r.received).toHaveLength(5);
    expect(attempts).toHaveLength(5);
  });

  it('a delivery held past maxHoldMs since its event last moved goes through the open breaker (a real attempt)', async () => {
    const url = await refusingUrl();
    const g = gate();
    const fresh = setup(eventRow({ url, updatedAt: new Date() }), { gate: g, maxHoldMs: 60_000 });
    await fresh.delivery.attempt('evt_1', false);
    await fresh.delivery.attempt('evt_1', false);
    expect((await fresh.delivery.attempt('evt_1', false)).outcome).toBe('held');
    const overdue = setup(eventRow({ url, updatedAt: new Date(Date.now() - 61_000) }), { gate: g, maxHoldMs: 60_000 });
    expect(await overdue.delivery.attempt('evt_1', false)).toEqual({ outcome: 'retry', error: 'refused' });
    expect(overdue.attempts).toHaveLength(1);
  });

  it('other receivers are not affected by one that is failing', async () => {
    const bad = await receiver(503);
    const good = await receiverAt(200);
    try {
      const g = gate();
      const failing = setup(eventRow({ url: bad.url, updatedAt: new Date() }), { gate: g, maxHoldMs: 3_600_000 });
      for (let i = 0; i < 3; i++) await failing.delivery.attempt('evt_1', false);
      const healthy = setup(eventRow({ url: good.url }), { gate: g });
      expect(await healthy.delivery.attempt('evt_1', false)).toEqual({ outcome: 'delivered' });
    } finally {
      await bad.close();
    }
  });
});

