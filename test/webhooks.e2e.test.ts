import { createHmac } from 'node:crypto';
import { Wallet } from 'ethers';
import { Webhook } from 'standardwebhooks';
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { MerchantAction } from '@facilitator/merchants';
import { buildApi } from '../apps/api/src/build-api';
import { newMerchant } from './support/chain-actions';
import { merchantCall, webhookSecretOf } from './support/merchant-client';
import { startTestStack, TestStack, WEBHOOK_SECRET } from './support/test-stack';
import { WebhookReceiver, type ReceivedDelivery } from './support/webhook-receiver';
import { setTimeout as sleep } from 'node:timers/promises';

// short retry delays so the whole schedule runs in seconds; the production ones are in the config test
const DELAYS = [200, 400, 600, 800, 1000];
// a short rotation grace period, so "after the grace period" is seconds away
const GRACE_SECONDS = 4;
const OPERATOR_KEY = 'operator-key-webhooks';
let stack: TestStack;
let receiver: WebhookReceiver;
/** merchants (by lowercase address) whose secrets the tests fetch, as merchants do, through the API */
const wallets = new Map<string, Wallet>();

beforeAll(async () => {
  [stack, receiver] = await Promise.all([
    startTestStack({
      env: {
        WEBHOOK_RETRY_DELAYS_MS: DELAYS.join(','),
        WEBHOOK_SECRET_GRACE_SECONDS: String(GRACE_SECONDS),
        API_KEYS: OPERATOR_KEY,
        // every endpoint here is a path of one test receiver, i.e. one receiver (origin) for the cap and the
        // breaker, where each merchant would have its own: the failing endpoints of one test must not hold
        // another's deliveries. The cap and the breaker are tested in receiver-gate.test.ts and test/abuse.
        WEBHOOK_RECEIVER_CONCURRENCY: '20',
        WEBHOOK_BREAKER_FAILURES: '1000',
      },
    }),
    new WebhookReceiver().start(),
  ]);
  const merchant = new Wallet(stack.devnet.accounts.merchant.privateKey);
  wallets.set(merchant.address.toLowerCase(), merchant);
  await stack.startWorker();
});
afterAll(async () => {
  await Promise.all([stack?.stop(), receiver?.stop()]);
});

/** The HMAC key of a Standard Webhooks secret: the bytes after `whsec_`, base64-decoded. */
const keyOf = (secret: string) => Buffer.from(secret.slice('whsec_'.length), 'base64');

/** The documented rule, written independently of the service's code: sorted keys, no spaces, no `signature`. */
function expectedSignature(body: Record<string, unknown>, secret: string): string {
  const sorted = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(sorted)
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]))
        : value;
  const { signature: _omit, ...rest } = body;
  return createHmac('sha256', keyOf(secret)).update(JSON.stringify(sorted(rest))).digest('hex');
}

/** Whether the official Standard Webhooks library accepts the delivery with this secret. */
function libraryAccepts(delivery: ReceivedDelivery, secret: string): boolean {
  try {
    new Webhook(secret).verify(delivery.rawBody, delivery.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

/** Signed with its merchant's own secret (fetched as the merchant would), by both rules. */
async function expectSigned(delivery: ReceivedDelivery) {
  const merchant = delivery.body.merchant_address as string;
  expect(merchant).toMatch(/^0x[0-9a-f]{40}$/);
  const secret = await webhookSecretOf(stack, wallets.get(merchant)!);
  const signature = expectedSignature(delivery.body, secret);
  expect(delivery.headers['x-webhook-signature']).toBe(signature);
  expect(delivery.body.signature).toBe(signature);
  expect(delivery.headers['content-type']).toBe('application/json');
  expect(delivery.headers['webhook-id']).toBe(delivery.body.event_id);
  expect(libraryAccepts(delivery, secret)).toBe(true);
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
      merchant_address: stack.devnet.accounts.merchant.address.toLowerCase(),
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
      merchant_address: stack.devnet.accounts.merchant.address.toLowerCase(),
      status: 'settled',
      data: {
        settlement_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        settled_amount: '10000',
        fee: '10000',
        fee_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      },
      signature: expect.any(String),
    });
    await expectSigned(verified);
    await expectSigned(settled);
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
    await expectSigned(event);
  });

  it('no event, and no lookup or delivery, for a payment whose signature is not valid', async () => {
    const url = receiver.endpoint('forged');
    const p = await stack.payment();
    const { TRANSFER_WITH_AUTHORIZATION_TYPES } = await import('@facilitator/payment-mechanisms');
    const forged = await Wallet.createRandom().signTypedData(stack.devnet.eip712Domain, TRANSFER_WITH_AUTHORIZATION_TYPES, p.authorization);
    const body = p.formB({ webhook_url: url }) as { metadata: { paymentPayload: { payload: { signature: string } } } };
    body.metadata.paymentPayload.payload.signature = forged;
    const v = await stack.http.post('/v1/verify').send(body);
    expect(v.status).toBe(400);
    expect(v.body.error.message).toBe('invalid signature');
    const verificationId = v.body.error.details.verification_id as string;
    expect(await stack.db.prisma.verification.count({ where: { id: verificationId, status: 'rejected' } })).toBe(1);
    expect(await stack.db.prisma.webhookEvent.count({ where: { verificationId } })).toBe(0);
    // a validly signed payment that fails a later check (amount) still gets its verification.failed
    const wrongAmount = await verifyFormB(url, { value: 1n });
    expect(wrongAmount.status).toBe(400);
    const [event] = await receiver.waitFor('forged', 1);
    expect(event.body.verification_id).toBe(wrongAmount.body.error.details.verification_id);
    expect(receiver.deliveries('forged')).toHaveLength(1);
  });

  it('settlement.rejected', async () => {
    const merchant = await newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 0n });
    wallets.set(merchant.address.toLowerCase(), merchant);
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
    await expectSigned(rejected);
  });
});

describe('the retry schedule', () => {
  it('a receiver answering 500 twice then 200 gets exactly 3 attempts, on the configured delays, with one event_id', async () => {
    const url = receiver.endpoint('flaky', (n, _req, res) => res.writeHead(n <= 2 ? 500 : 200).end());
    await verifyFormB(url);
    const attempts = await receiver.waitFor('flaky', 3);
    await sleep(DELAYS[2] + 300);
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
      await sleep(50);
    }
    expect(event!.status).toBe('failed');
    expect(event!.attempts).toHaveLength(6);
    await sleep(DELAYS[4] + 300);
    expect(receiver.deliveries('down')).toHaveLength(6);

    const listed = await stack.http.get('/v1/webhooks/deliveries').set('X-API-Key', OPERATOR_KEY).query({ verification_id: v.body.verification_id });
    expect(listed.status).toBe(200);
    expect(listed.body.deliveries[0]).toMatchObject({ event_id: eventId, status: 'failed', attempt_count: 6 });
    expect(listed.body.deliveries[0].attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 503, 503, 503, 503, 503]);

    healthy = true;
    const again = await stack.http.post(`/v1/webhooks/deliveries/${eventId}/redeliver`).set('X-API-Key', OPERATOR_KEY);
    expect(again.status).toBe(202);
    const all = await receiver.waitFor('down', 7);
    expect(all[6].body.event_id).toBe(eventId);
    await expectSigned(all[6]);
    for (let i = 0; i < 100; i++) {
      event = await stack.db.prisma.webhookEvent.findUniqueOrThrow({ where: { id: eventId }, include: { attempts: true } });
      if (event.status === 'delivered') break;
      await sleep(50);
    }
    expect(event!.status).toBe('delivered');
    expect(event!.attempts.map((a) => a.number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // a delivered event cannot be redelivered
    expect((await stack.http.post(`/v1/webhooks/deliveries/${eventId}/redeliver`).set('X-API-Key', OPERATOR_KEY)).status).toBe(400);
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
    expect(event.attempts[0]).toMatchObject({ statusCode: 302, error: 'http_302' });
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
    expect(first.error).toBe('timeout');
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
    ['http://localhost/hook', 'non-public address'],
    ['ftp://example.com/hook', 'must use http or https'],
    // IPv4-compatible IPv6 hides 127.0.0.1
    ['http://[::7f00:1]/hook', 'non-public address (::7f00:1)'],
    // a public address, but not a web port: receivers listen on 443 or 80 unless configured
    ['https://93.184.216.34:8443/hook', 'webhook_url port 8443 is not allowed (allowed: 443, 80)'],
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
    await sleep(50);
  }
  expect(await stack.db.prisma.webhookEvent.count({ where: { verificationId: { in: ids }, status: 'delivered' } })).toBe(5);
}, 30_000);

it('a forged payload fails the receiver-side check', async () => {
  const { verifyWebhookDelivery } = await import('@facilitator/webhooks');
  const secret = await webhookSecretOf(stack, wallets.get(stack.devnet.accounts.merchant.address.toLowerCase())!);
  const url = receiver.endpoint('helper');
  await verifyFormB(url);
  const [delivery] = await receiver.waitFor('helper', 1);
  const header = delivery.headers['x-webhook-signature'] as string;
  expect(verifyWebhookDelivery(delivery.rawBody, header, secret)).toMatchObject({ valid: true });
  const tampered = delivery.rawBody.replace('"verified"', '"settled"');
  expect(verifyWebhookDelivery(tampered, header, secret)).toEqual({ valid: false, reason: 'signature does not match' });
  expect(verifyWebhookDelivery(delivery.rawBody, header, 'another-secret')).toEqual({ valid: false, reason: 'signature does not match' });
});

describe('each merchant has its own secret', () => {
  const sorted = (body: Record<string, unknown>) => {
    const { signature: _omit, ...rest } = body;
    const sort = (value: unknown): unknown =>
      Array.isArray(value) ? value.map(sort) : value && typeof value === 'object' ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sort((value as Record<string, unknown>)[k])])) : value;
    return JSON.stringify(sort(rest));
  };

  it("merchant A's deliveries verify with A's secret by both rules, and fail with merchant B's and with the master secret", async () => {
    const [a, b] = await Promise.all([newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 100_000n }), newMerchant(stack.devnet, { balance: 0n, allowance: 0n })]);
    wallets.set(a.address.toLowerCase(), a);
    const url = receiver.endpoint('merchant-a');
    const v = await verifyFormB(url, { to: a.address }, { seller_address: a.address });
    expect(v.status).toBe(200);
    await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: a.address });
    const deliveries = await receiver.waitFor('merchant-a', 2);
    expect(deliveries.map((d) => d.body.event_type)).toEqual(['verification.completed', 'settlement.completed']);
    const [secretA, secretB] = await Promise.all([webhookSecretOf(stack, a), webhookSecretOf(stack, b)]);
    expect(secretA).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretB).not.toBe(secretA);
    for (const d of deliveries) {
      expect(d.body.merchant_address).toBe(a.address.toLowerCase());
      const header = d.headers['x-webhook-signature'];
      expect(header).toBe(expectedSignature(d.body, secretA));
      expect(libraryAccepts(d, secretA)).toBe(true);
      expect(expectedSignature(d.body, secretB)).not.toBe(header);
      expect(libraryAccepts(d, secretB)).toBe(false);
      expect(createHmac('sha256', WEBHOOK_SECRET).update(sorted(d.body)).digest('hex')).not.toBe(header);
      expect(libraryAccepts(d, `whsec_${Buffer.from(WEBHOOK_SECRET).toString('base64')}`)).toBe(false);
    }
  });

  it('during a rotation both secrets verify; after the grace period only the new one', async () => {
    const { verifyWebhookHeaders } = await import('@facilitator/webhooks');
    const m = await newMerchant(stack.devnet, { balance: 0n, allowance: 0n });
    const old = await webhookSecretOf(stack, m);
    const rotated = await merchantCall(stack, m, MerchantAction.RotateWebhookSecret);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ merchant: m.address.toLowerCase(), secret: expect.stringMatching(/^whsec_/), previous_secret: old, previous_secret_expires_at: expect.any(String) });
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(old);
    const url = receiver.endpoint('rotation');
    await verifyFormB(url, { to: m.address }, { seller_address: m.address });
    const [during] = await receiver.waitFor('rotation', 1);
    expect((during.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(libraryAccepts(during, fresh)).toBe(true);
    expect(libraryAccepts(during, old)).toBe(true);
    expect(during.headers['x-webhook-signature']).toBe(expectedSignature(during.body, fresh));
    expect(during.headers['x-webhook-signature-previous']).toBe(expectedSignature(during.body, old));
    expect(verifyWebhookHeaders(during.rawBody, during.headers, old)).toMatchObject({ valid: true });

    await sleep(GRACE_SECONDS * 1000 + 500);
    await verifyFormB(url, { to: m.address }, { seller_address: m.address });
    const [, after] = await receiver.waitFor('rotation', 2);
    expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(libraryAccepts(after, fresh)).toBe(true);
    expect(libraryAccepts(after, old)).toBe(false);
    expect(after.headers['x-webhook-signature-previous']).toBeUndefined();
    expect(verifyWebhookHeaders(after.rawBody, after.headers, old)).toMatchObject({ valid: false });
    expect((await merchantCall(stack, m, MerchantAction.GetWebhookSecret)).body).toEqual({ merchant: m.address.toLowerCase(), secret: fresh });
  }, 30_000);

  it('the first delivery after a rotation is signed with the new secret, even right after one with the old', async () => {
    const m = await newMerchant(stack.devnet, { balance: 0n, allowance: 0n });
    wallets.set(m.address.toLowerCase(), m);
    const url = receiver.endpoint('rotate-now');
    const old = await webhookSecretOf(stack, m);
    // the worker signs one of this merchant's events with the old secret (formerly kept a second)
    await verifyFormB(url, { to: m.address }, { seller_address: m.address });
    const [before] = await receiver.waitFor('rotate-now', 1);
    expect(before.headers['x-webhook-signature']).toBe(expectedSignature(before.body, old));
    const rotated = await merchantCall(stack, m, MerchantAction.RotateWebhookSecret, { grace_seconds: 0 });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    // a receiver that switched to the new secret at once accepts the very next delivery
    await verifyFormB(url, { to: m.address }, { seller_address: m.address });
    const [, after] = await receiver.waitFor('rotate-now', 2);
    expect(after.headers['x-webhook-signature']).toBe(expectedSignature(after.body, fresh));
    expect(libraryAccepts(after, fresh)).toBe(true);
    // grace_seconds 0: the old secret signs nothing any more
    expect(libraryAccepts(after, old)).toBe(false);
    expect(after.headers['x-webhook-signature-previous']).toBeUndefined();
  });

  it('a delivery replayed 6 minutes later is refused by the official library', async () => {
    const merchant = wallets.get(stack.devnet.accounts.merchant.address.toLowerCase())!;
    const url = receiver.endpoint('replay');
    await verifyFormB(url);
    const [delivery] = await receiver.waitFor('replay', 1);
    const secret = await webhookSecretOf(stack, merchant);
    expect(libraryAccepts(delivery, secret)).toBe(true);
    const sixMinutesLater = Date.now() + 6 * 60 * 1000;
    const clock = jest.spyOn(Date, 'now').mockReturnValue(sixMinutesLater);
    try {
      expect(() => new Webhook(secret).verify(delivery.rawBody, delivery.headers as Record<string, string>)).toThrow(/timestamp too old/i);
    } finally {
      clock.mockRestore();
    }
  });

  it('merchant requests need the merchant signature: another key, a replay and an expired request are 401', async () => {
    const { merchantProof } = await import('./support/merchant-client');
    const m = await newMerchant(stack.devnet, { balance: 0n, allowance: 0n });
    const stranger = Wallet.createRandom();
    const path = `/v1/merchants/${m.address}/webhook-secret`;
    const forged = await merchantProof(stranger as unknown as Wallet, m.address, MerchantAction.GetWebhookSecret);
    expect((await stack.http.post(path).send({ proof: forged })).status).toBe(401);
    const proof = await merchantProof(m, m.address, MerchantAction.GetWebhookSecret);
    expect((await stack.http.post(path).send({ proof })).status).toBe(200);
    const replay = await stack.http.post(path).send({ proof });
    expect(replay.status).toBe(401);
    expect(replay.body.error.message).toContain('used already');
    // a signature for one action does not do another
    const other = await merchantProof(m, m.address, MerchantAction.GetWebhookSecret);
    expect((await stack.http.post(`${path}/rotate`).send({ proof: other })).status).toBe(401);
    const expired = await merchantProof(m, m.address, MerchantAction.GetWebhookSecret, {}, { lifetimeSeconds: -1 });
    expect((await stack.http.post(path).send({ proof: expired })).status).toBe(401);
    const tooLong = await merchantProof(m, m.address, MerchantAction.GetWebhookSecret, {}, { lifetimeSeconds: 3600 });
    expect((await stack.http.post(path).send({ proof: tooLong })).status).toBe(400);
    expect((await stack.http.post(path).send({})).status).toBe(400);
    expect((await stack.http.post('/v1/merchants/not-an-address/webhook-secret').send({ proof })).status).toBe(400);
  });
});

describe('who may read deliveries', () => {
  let open: ReturnType<typeof buildApi>;
  beforeAll(() => {
    open = buildApi(loadConfig({ ...stack.env, API_KEYS: undefined }), createSilentLogger());
  });
  afterAll(() => open.close());

  it('nobody without a key, even with API_KEYS unset; a merchant its own events with its settle key; the operator all', async () => {
    const m = await newMerchant(stack.devnet, { balance: 0n, allowance: 0n });
    const key = (await merchantCall(stack, m, MerchantAction.EnableSettleProtection)).body.settle_key as string;
    expect(key).toMatch(/^fsk_/);
    const url = receiver.endpoint('scoped');
    const own = await verifyFormB(url, { to: m.address }, { seller_address: m.address });
    const others = await verifyFormB(url);
    const [first] = await receiver.waitFor('scoped', 2);
    void first;
    const http = supertest(open.app);
    const list = (verificationId: string) => http.get('/v1/webhooks/deliveries').query({ verification_id: verificationId });

    expect((await list(own.body.verification_id)).status).toBe(401);
    expect((await list(own.body.verification_id).set('Authorization', 'Bearer fsk_wrong')).status).toBe(401);
    const mine = await list(own.body.verification_id).set('Authorization', `Bearer ${key}`);
    expect(mine.status).toBe(200);
    expect(mine.body.deliveries).toHaveLength(1);
    expect((await list(others.body.verification_id).set('Authorization', `Bearer ${key}`)).body.deliveries).toEqual([]);
    const othersEvent = await stack.db.prisma.webhookEvent.findFirstOrThrow({ where: { verificationId: others.body.verification_id } });
    expect((await http.post(`/v1/webhooks/deliveries/${othersEvent.id}/redeliver`).set('Authorization', `Bearer ${key}`)).status).toBe(404);
    // redelivering is never open either, even with API_KEYS unset
    const redeliverWithoutKey = await http.post(`/v1/webhooks/deliveries/${othersEvent.id}/redeliver`);
    expect({ status: redeliverWithoutKey.status, code: redeliverWithoutKey.body.error?.code }).toEqual({ status: 401, code: 'unauthorized' });
    // status records: its own with its key; another merchant's is not found
    expect((await http.get(`/v1/verifications/${own.body.verification_id}`).set('Authorization', `Bearer ${key}`)).status).toBe(200);
    expect((await http.get(`/v1/verifications/${others.body.verification_id}`).set('Authorization', `Bearer ${key}`)).status).toBe(404);
    // the operator reads everything
    const operator = await stack.http.get('/v1/webhooks/deliveries').set('X-API-Key', OPERATOR_KEY).query({ verification_id: others.body.verification_id });
    expect(operator.body.deliveries).toHaveLength(1);
    expect((await stack.http.get(`/v1/verifications/${others.body.verification_id}`)).status).toBe(401);
  });

  it("a merchant redelivers its own failed event with its settle key, and reads its own settlement", async () => {
    const m = await newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 1_000_000n });
    const key = (await merchantCall(stack, m, MerchantAction.EnableSettleProtection)).body.settle_key as string;
    let up = false;
    const url = receiver.endpoint('own-redeliver', (_n, _req, res) => res.writeHead(up ? 200 : 503).end());
    const v = await verifyFormB(url, { to: m.address }, { seller_address: m.address });
    const [first] = await receiver.waitFor('own-redeliver', 6, 30_000);
    const eventId = first.body.event_id as string;
    const http = supertest(open.app);
    let listed = await http.get('/v1/webhooks/deliveries').set('Authorization', `Bearer ${key}`).query({ verification_id: v.body.verification_id });
    for (let i = 0; i < 100 && listed.body.deliveries[0].status !== 'failed'; i++) {
      await sleep(50);
      listed = await http.get('/v1/webhooks/deliveries').set('Authorization', `Bearer ${key}`).query({ verification_id: v.body.verification_id });
    }
    expect(listed.body.deliveries[0]).toMatchObject({ event_id: eventId, status: 'failed' });
    expect(listed.body.deliveries[0].attempts.map((a: { error: string }) => a.error)).toEqual(Array(6).fill('http_503'));
    up = true;
    expect((await http.post(`/v1/webhooks/deliveries/${eventId}/redeliver`).set('Authorization', `Bearer ${key}`)).status).toBe(202);
    await receiver.waitFor('own-redeliver', 7);

    const s = await stack.http.post('/v1/settle').set('Authorization', `Bearer ${key}`).send({ verification_id: v.body.verification_id, destination_address: m.address });
    expect(s.status).toBe(200);
    expect((await http.get(`/v1/settlements/${s.body.settlement_id}`).set('Authorization', `Bearer ${key}`)).status).toBe(200);
    const stranger = (await merchantCall(stack, await newMerchant(stack.devnet, { balance: 0n, allowance: 0n }), MerchantAction.EnableSettleProtection)).body.settle_key as string;
    expect((await http.get(`/v1/settlements/${s.body.settlement_id}`).set('Authorization', `Bearer ${stranger}`)).status).toBe(404);
  }, 40_000);

  it('shows outcome categories, never raw socket errors', async () => {
    // port 1 on loopback: nothing listens (private addresses are allowed in this stack)
    const v = await verifyFormB('http://127.0.0.1:1/hook');
    let attempts: Array<{ error: string | null }> = [];
    for (let i = 0; i < 100 && attempts.length === 0; i++) {
      const listed = await stack.http.get('/v1/webhooks/deliveries').set('X-API-Key', OPERATOR_KEY).query({ verification_id: v.body.verification_id });
      attempts = listed.body.deliveries[0]?.attempts ?? [];
      if (attempts.length === 0) await sleep(50);
    }
    expect(attempts[0].error).toBe('refused');
    expect(JSON.stringify(attempts)).not.toContain('ECONNREFUSED');
  });
});
