import { createHmac } from 'node:crypto';
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi } from '../apps/api/src/build-api';
import { newMerchant } from './support/chain-actions';
import { startTestStack, TestStack, WEBHOOK_SECRET } from './support/test-stack';
import { WebhookReceiver } from './support/webhook-receiver';

// short retry delays so the whole schedule runs in seconds; the production ones are in the config test
const DELAYS = [200, 400, 600, 800, 1000];
let stack: TestStack;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [stack, receiver] = await Promise.all([
    startTestStack({ env: { WEBHOOK_RETRY_DELAYS_MS: DELAYS.join(',') } }),
    new WebhookReceiver().start(),
  ]);
  await stack.startWorker();
});
afterAll(async () => {
  await Promise.all([stack?.stop(), receiver?.stop()]);
});

/** The documented rule, written independently of the service's code: sorted keys, no spaces, no `signature`. */
function expectedSignature(body: Record<string, unknown>): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]))
        : value;
  const { signature: _omit, ...rest } = body;
  return createHmac('sha256', WEBHOOK_SECRET).update(JSON.stringify(sorted(rest))).digest('hex');
}

function expectSigned(delivery: { headers: Record<string, unknown>; body: Record<string, unknown> }) {
  const signature = expectedSignature(delivery.body);
  expect(delivery.headers['x-webhook-signature']).toBe(signature);
  expect(delivery.body.signature).toBe(signature);
  expect(delivery.headers['content-type']).toBe('application/json');
}

async function verifyFormB(webhookUrl: string, fields: Parameters<TestStack['payment']>[0] = {}, overrides: Record<string, unknown> = {}) {
  const p = await stack.payment(fields);
  return stack.http.post('/v1/verify').send(p.formB({ webhook_url: webhookUrl, ...overrides }));
}

describe('events arrive signed, with the spec fields', () => {
  it('verification.completed, then settlement.completed', async () => {
    const url = receiver.endpoint('happy');
    const v = await verifyFormB(url);
    expect(v.status).toBe(200);
    const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
    const [verified, settled] = await receiver.waitFor('happy', 2);
    expect(verified.body).toEqual({
      event_type: 'verification.completed',
      event_id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      timestamp: expect.stringMatching(/Z$/),
      verification_id: v.body.verification_id,
      settlement_id: null,
      status: 'verified',
      data: expect.objectContaining({ verified_amount: '10000', nonce: v.body.transaction_hash }),
      signature: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(settled.body).toEqual({
      event_type: 'settlement.completed',
      event_id: expect.stringMatching(/^evt_/),
      timestamp: expect.any(String),
      verification_id: v.body.verification_id,
      settlement_id: s.body.settlement_id,
      status: 'settled',
      data: {
        settlement_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        settled_amount: '10000',
        fee: '10000',
        fee_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      },
      signature: expect.any(String),
    });
    expectSigned(verified);
    expectSigned(settled);
  });

  it('verification.failed', async () => {
    const url = receiver.endpoint('vfail');
    const v = await verifyFormB(url, { value: 1n });
    expect(v.status).toBe(400);
    const [event] = await receiver.waitFor('vfail', 1);
    expect(event.body).toMatchObject({
      event_type: 'verification.failed',
      verification_id: v.body.error.details.verification_id,
      settlement_id: null,
      status: 'rejected',
      data: { reason: 'amount mismatch', details: { authorization_value: '1', expected_amount: '10000' } },
    });
    expectSigned(event);
  });

  it('settlement.rejected', async () => {
    const merchant = await newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 0n });
    const url = receiver.endpoint('sfail');
    const v = await verifyFormB(url, { to: merchant.address }, { seller_address: merchant.address });
    const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: merchant.address });
    const [, rejected] = await receiver.waitFor('sfail', 2);
    expect(rejected.body).toMatchObject({
      event_type: 'settlement.rejected',
      settlement_id: s.body.settlement_id,
      status: 'failed',
      data: { settlement_tx_hash: null, settled_amount: '0', fee: '0', error: { code: 'insufficient_allowance' } },
    });
    expectSigned(rejected);
  });
});

describe('the retry schedule', () => {
  it('a receiver answering 500 twice then 200 gets exactly 3 attempts, on the configured delays, with one event_id', async () => {
    const url = receiver.endpoint('flaky', (n, _req, res) => res.writeHead(n <= 2 ? 500 : 200).end());
    await verifyFormB(url);
    const attempts = await receiver.waitFor('flaky', 3);
    await new Promise((r) => setTimeout(r, DELAYS[2] + 300));
    expect(receiver.deliveries('flaky')).toHaveLength(3);
    expect(new Set(attempts.map((a) => a.body.event_id)).size).toBe(1);
    expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(DELAYS[0] - 20);
    expect(attempts[2].at - attempts[1].at).toBeGreaterThanOrEqual(DELAYS[1] - 20);
    const event = await stack.db.prisma.webhookEvent.findUniqueOrThrow({ where: { id: attempts[0].body.event_id as string }, include: { attempts: true } });
    expect(event.status).toBe('delivered');
    expect(event.attempts.map((a) => a.statusCode).sort()).toEqual([200, 500, 500]);
  });

  it('after 6 failures the delivery is failed with 6 recorded attempts; redelivery sends the same event again', async () => {
    let healthy = false;
    const url = receiver.endpoint('down', (_n, _req, res) => res.writeHead(healthy ? 200 : 503).end());
    const v = await verifyFormB(url);
    const attempts = await receiver.waitFor('down', 6, 30_000);
    const eventId = attempts[0].body.event_id as string;
    let event;
    for (let i = 0; i < 100; i++) {
      event = await stack.db.prisma.webhookEvent.findUniqueOrThrow({ where: { id: eventId }, include: { attempts: true } });
      if (event.status === 'failed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(event!.status).toBe('failed');
    expect(event!.attempts).toHaveLength(6);
    await new Promise((r) => setTimeout(r, DELAYS[4] + 300));
    expect(receiver.deliveries('down')).toHaveLength(6);

    const listed = await stack.http.get('/v1/webhooks/deliveries').query({ verification_id: v.body.verification_id });
    expect(listed.status).toBe(200);
    expect(listed.body.deliveries[0]).toMatchObject({ event_id: eventId, status: 'failed', attempt_count: 6 });
    expect(listed.body.deliveries[0].attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 503, 503, 503, 503, 503]);

    healthy = true;
    const again = await stack.http.post(`/v1/webhooks/deliveries/${eventId}/redeliver`);
    expect(again.status).toBe(202);
    const all = await receiver.waitFor('down', 7);
    expect(all[6].body.event_id).toBe(eventId);
    expectSigned(all[6]);
    for (let i = 0; i < 100; i++) {
      event = await stack.db.prisma.webhookEvent.findUniqueOrThrow({ where: { id: eventId }, include: { attempts: true } });
      if (event.status === 'delivered') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(event!.status).toBe('delivered');
    expect(event!.attempts.map((a) => a.number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // a delivered event cannot be redelivered
    expect((await stack.http.post(`/v1/webhooks/deliveries/${eventId}/redeliver`)).status).toBe(400);
  }, 40_000);

  it('a redirect is not followed and counts as a failure', async () => {
    const target = receiver.endpoint('redirect-target');
    const url = receiver.endpoint('redirect', (n, _req, res) => res.writeHead(n === 1 ? 302 : 200, { location: target }).end());
    await verifyFormB(url);
    await receiver.waitFor('redirect', 2);
    expect(receiver.deliveries('redirect-target')).toHaveLength(0);
    const event = await stack.db.prisma.webhookEvent.findUniqueOrThrow({
      where: { id: receiver.deliveries('redirect')[0].body.event_id as string },
      include: { attempts: { orderBy: { number: 'asc' } } },
    });
    expect(event.attempts[0]).toMatchObject({ statusCode: 302, error: 'receiver answered HTTP 302' });
  });

  it('a receiver that takes 10 s counts as a failure after 5 s', async () => {
    const url = receiver.endpoint('slow', (n, _req, res) => {
      if (n === 1) setTimeout(() => res.writeHead(200).end(), 10_000).unref();
      else res.writeHead(200).end();
    });
    await verifyFormB(url);
    await receiver.waitFor('slow', 2, 15_000);
    const event = await stack.db.prisma.webhookEvent.findUniqueOrThrow({
      where: { id: receiver.deliveries('slow')[0].body.event_id as string },
      include: { attempts: { orderBy: { number: 'asc' } } },
    });
    const first = event.attempts[0];
    expect(first.statusCode).toBeNull();
    expect(first.error).toContain('no answer within 5000 ms');
    expect(first.durationMs).toBeGreaterThanOrEqual(4_900);
    expect(first.durationMs).toBeLessThan(6_500);
  }, 20_000);
});

describe('webhook URLs that could reach inside our network are refused', () => {
  let strict: ReturnType<typeof buildApi>;
  let production: ReturnType<typeof buildApi>;
  beforeAll(() => {
    strict = buildApi(loadConfig({ ...stack.env, WEBHOOK_ALLOW_PRIVATE: 'false' }), createSilentLogger());
    production = buildApi(loadConfig({ ...stack.env, WEBHOOK_ALLOW_PRIVATE: 'false', NODE_ENV: 'production' }), createSilentLogger());
  });
  afterAll(async () => {
    await Promise.all([strict.close(), production.close()]);
  });

  it.each([
    ['http://127.0.0.1/hook', 'non-public address (127.0.0.1)'],
    ['http://[::1]/hook', 'non-public address (::1)'],
    ['http://[::ffff:127.0.0.1]/hook', 'non-public address'],
    ['http://169.254.169.254/latest/meta-data', 'non-public address (169.254.169.254)'],
    ['http://10.0.0.1/hook', 'non-public address (10.0.0.1)'],
    ['http://192.168.1.1/hook', 'non-public address (192.168.1.1)'],
    ['http://[fd00::1]/hook', 'non-public address (fd00::1)'],
    ['http://localhost:8080/hook', 'non-public address'],
    ['ftp://example.com/hook', 'must use http or https'],
  ])('%s', async (url, message) => {
    const p = await stack.payment();
    const res = await supertest(strict.app).post('/v1/verify').send(p.formB({ webhook_url: url }));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain(message);
  });

  it('http:// in production', async () => {
    const p = await stack.payment();
    const res = await supertest(production.app).post('/v1/verify').send(p.formB({ webhook_url: 'http://example.com/hook' }));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('webhook_url must use https');
  });
});

it('a webhook URL that passed the check but resolves privately at connection time is not connected to', async () => {
  const { safeHttpPost } = await import('@facilitator/webhooks');
  // `localhost` stands for a name whose DNS answer changed to a private address after validation
  const result = await safeHttpPost(new URL(receiver.endpoint('rebind').replace('127.0.0.1', 'localhost')), '{}', {}, {
    timeoutMs: 5_000,
    allowPrivate: false,
  });
  expect(result.statusCode).toBeUndefined();
  expect(result.error).toMatch(/refused to connect to non-public address/);
  expect(receiver.deliveries('rebind')).toHaveLength(0);
});

it('deliveries pending when the worker dies are still delivered after it restarts', async () => {
  let up = false;
  const url = receiver.endpoint('restart', (_n, _req, res) => res.writeHead(up ? 200 : 503).end());
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await verifyFormB(url)).body.verification_id);
  await receiver.waitFor('restart', 5);
  // kill every worker of the stack, mid-schedule
  const killed = await stack.db.prisma.webhookEvent.count({ where: { verificationId: { in: ids }, status: 'pending' } });
  expect(killed).toBe(5);
  await stack.killWorkers();
  up = true;
  await stack.startWorker();
  for (let i = 0; i < 200; i++) {
    const delivered = await stack.db.prisma.webhookEvent.count({ where: { verificationId: { in: ids }, status: 'delivered' } });
    if (delivered === 5) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(await stack.db.prisma.webhookEvent.count({ where: { verificationId: { in: ids }, status: 'delivered' } })).toBe(5);
}, 30_000);

it('a forged payload fails the receiver-side check', async () => {
  const { verifyWebhookDelivery } = await import('@facilitator/webhooks');
  const url = receiver.endpoint('helper');
  await verifyFormB(url);
  const [delivery] = await receiver.waitFor('helper', 1);
  const header = delivery.headers['x-webhook-signature'] as string;
  expect(verifyWebhookDelivery(delivery.rawBody, header, WEBHOOK_SECRET)).toMatchObject({ valid: true });
  const tampered = delivery.rawBody.replace('"verified"', '"settled"');
  expect(verifyWebhookDelivery(tampered, header, WEBHOOK_SECRET)).toEqual({ valid: false, reason: 'signature does not match' });
  expect(verifyWebhookDelivery(delivery.rawBody, header, 'another-secret')).toEqual({ valid: false, reason: 'signature does not match' });
});
