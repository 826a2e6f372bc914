import { Wallet, hexlify, randomBytes } from 'ethers';
import { loadConfig } from '@facilitator/config';
import { IdempotencyRepository } from '@facilitator/db';
import { createSilentLogger } from '@facilitator/logging';
import supertest from 'supertest';
import { buildApi } from '../apps/api/src/build-api';
import { startTestStack, TestStack, withStackQueues } from './support/test-stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

const now = () => BigInt(Math.floor(Date.now() / 1000));

function expectVerificationFailed(res: supertest.Response, message: string, details: Record<string, unknown>) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('verification_failed');
  expect(res.body.error.message).toBe(message);
  expect(res.body.error.details).toEqual({ ...details, verification_id: expect.stringMatching(/^ver_[0-9a-f]{32}$/) });
}

describe('POST /v1/verify, Form A', () => {
  it('verifies a valid payment and stores it', async () => {
    const p = await stack.payment();
    const res = await stack.http.post('/v1/verify').send(p.formA());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      isValid: true,
      message: 'Payment verified',
      details: {
        verification_id: expect.stringMatching(/^ver_[0-9a-f]{32}$/),
        verified_amount: '10000',
        verified_token: stack.devnet.token.toLowerCase(),
        merchant_address: stack.devnet.accounts.merchant.address.toLowerCase(),
        payer_address: stack.devnet.accounts.payer.address.toLowerCase(),
        verified_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    });
    const stored = await stack.db.prisma.verification.findUniqueOrThrow({ where: { id: res.body.details.verification_id } });
    expect(stored).toMatchObject({ status: 'verified', nonce: p.authorization.nonce.toLowerCase(), chainId: 84532, protocolVersion: 2 });
  });

  it.each([
    ['$1', 1_000_000n],
    ['$0.5', 500_000n],
    ['$0.01', 10_000n],
  ])('accepts price %s as %s units', async (price, units) => {
    const p = await stack.payment({ value: units });
    const res = await stack.http.post('/v1/verify').send(p.formA({ price }));
    expect(res.status).toBe(200);
    expect(res.body.details.verified_amount).toBe(units.toString());
  });

  // parsed exactly, then refused by the minimum (by default the fee, 10000 units): a merchant must not pay
  // more in fees than a payment brings (MIN_PAYMENT_AMOUNT; docs/decisions.md, "Abuse")
  it.each([
    ['$0', 0n],
    ['$0.001', 1_000n],
    ['$0.0001', 100n],
    ['$0.00001', 10n],
    ['$0.000001', 1n],
  ])('reads price %s as %s units, below the minimum payment', async (price, units) => {
    const p = await stack.payment({ value: units });
    const res = await stack.http.post('/v1/verify').send(p.formA({ price }));
    expectVerificationFailed(res, 'amount below minimum', { authorization_value: units.toString(), minimum_amount: '10000' });
  });

  it('accepts atomic amounts as amount (x402 v2) and maxAmountRequired (x402 v1)', async () => {
    const p = await stack.payment({ value: 12_345n });
    const { requirements, payment } = p.formA();
    delete requirements.price;
    expect((await stack.http.post('/v1/verify').send({ payment, requirements: { ...requirements, amount: '12345' } })).status).toBe(200);
    const p2 = await stack.payment({ value: 12_345n });
    const body2 = p2.formA();
    delete body2.requirements.price;
    body2.requirements.maxAmountRequired = '12345';
    expect((await stack.http.post('/v1/verify').send(body2)).status).toBe(200);
  });

  it('refuses a price with more decimals than the token has, instead of rounding', async () => {
    const p = await stack.payment();
    const res = await stack.http.post('/v1/verify').send(p.formA({ price: '$0.0100001' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'invalid_request',
      message: 'invalid request',
      details: { errors: [{ path: '/requirements/price', message: 'price $0.0100001 has 7 decimals; the token has 6' }] },
    });
  });
});

describe('POST /v1/verify, Form B', () => {
  it('verifies a valid payment', async () => {
    const p = await stack.payment();
    const res = await stack.http.post('/v1/verify').send(p.formB());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      verification_id: expect.stringMatching(/^ver_/),
      status: 'verified',
      transaction_hash: p.authorization.nonce.toLowerCase(),
      chain: 'layer2-sepolia',
      verified_amount: '10000',
      verified_token: stack.devnet.token.toLowerCase(),
      seller_address: stack.devnet.accounts.merchant.address.toLowerCase(),
      verified_at: expect.any(String),
    });
  });

  it('accepts the network names real x402 v1 clients send', async () => {
    const p = await stack.payment();
    const body = p.formB({ chain: 'base-sepolia' });
    (body.metadata as { paymentPayload: { network: string } }).paymentPayload.network = 'base-sepolia';
    const res = await stack.http.post('/v1/verify').send(body);
    expect(res.status).toBe(200);
    expect(res.body.chain).toBe('base-sepolia');
  });

  it('requires transaction_hash to be the authorization nonce', async () => {
    const p = await stack.payment();
    const res = await stack.http.post('/v1/verify').send(p.formB({ transaction_hash: hexlify(randomBytes(32)) }));
    expect(res.status).toBe(400);
    expect(res.body.error.details.errors).toEqual([{ path: '/transaction_hash', message: 'must be the authorization nonce' }]);
  });

  it('enqueues a verification.completed event for a webhook_url', async () => {
    const p = await stack.payment();
    const res = await stack.http.post('/v1/verify').send(p.formB({ webhook_url: 'http://127.0.0.1:9/hook' }));
    expect(res.status).toBe(200);
    const events = await stack.db.prisma.webhookEvent.findMany({ where: { verificationId: res.body.verification_id } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ eventType: 'verification.completed', url: 'http://127.0.0.1:9/hook', status: 'pending' });
    expect(events[0].payload).toMatchObject({
      event_type: 'verification.completed',
      event_id: events[0].id,
      verification_id: res.body.verification_id,
      settlement_id: null,
      status: 'verified',
    });
    const job = await withStackQueues(stack.config, (queues) => queues.webhook.getJob(events[0].id));
    expect(job?.data).toEqual({ eventId: events[0].id });
  });

  it('enqueues a verification.failed event when verification fails', async () => {
    const p = await stack.payment({ value: 1n });
    const res = await stack.http.post('/v1/verify').send(p.formB({ webhook_url: 'http://127.0.0.1:9/hook' }));
    expect(res.status).toBe(400);
    const events = await stack.db.prisma.webhookEvent.findMany({ where: { verificationId: res.body.error.details.verification_id } });
    expect(events.map((e) => e.eventType)).toEqual(['verification.failed']);
    expect(events[0].payload).toMatchObject({ status: 'rejected', data: { reason: 'amount mismatch' } });
  });
});

describe('verification failures, each with the spec message and details', () => {
  it('invalid signature', async () => {
    const stranger = Wallet.createRandom();
    const p = await stack.payment();
    // the payer's authorization, signed by a stranger's key
    const { TRANSFER_WITH_AUTHORIZATION_TYPES } = await import('@facilitator/payment-mechanisms');
    const forged = await stranger.signTypedData(stack.devnet.eip712Domain, TRANSFER_WITH_AUTHORIZATION_TYPES, p.authorization);
    const body = p.formA();
    (body.payment.payload as { signature: string }).signature = forged;
    const res = await stack.http.post('/v1/verify').send(body);
    expectVerificationFailed(res, 'invalid signature', {
      reason: 'signature was not made by authorization.from',
      recovered: stranger.address.toLowerCase(),
      expected: stack.devnet.accounts.payer.address.toLowerCase(),
    });
  });

  it('invalid signature: a high-s twin that USDC would refuse', async () => {
    const p = await stack.payment();
    const sig = p.signature.slice(2);
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const s = BigInt('0x' + sig.slice(64, 128));
    const v = parseInt(sig.slice(128, 130), 16);
    const twin = '0x' + sig.slice(0, 64) + (n - s).toString(16).padStart(64, '0') + (v === 27 ? '1c' : '1b');
    const body = p.formA();
    (body.payment.payload as { signature: string }).signature = twin;
    const res = await stack.http.post('/v1/verify').send(body);
    expect(res.body.error.message).toBe('invalid signature');
    expect(res.body.error.details.reason).toBe("signature 's' value is in the upper half of the curve order");
  });

  it('payment must be to merchant address', async () => {
    const other = Wallet.createRandom().address;
    const p = await stack.payment({ to: other });
    const res = await stack.http.post('/v1/verify').send(p.formA());
    expectVerificationFailed(res, 'payment must be to merchant address', {
      authorization_to: other.toLowerCase(),
      expected_payTo: stack.devnet.accounts.merchant.address.toLowerCase(),
      reason: 'authorization.to does not equal the merchant address (payTo)',
    });
  });

  it('an authorization addressed to the treasury is rejected even when payTo names it', async () => {
    const treasury = stack.devnet.accounts.treasury.address;
    const p = await stack.payment({ to: treasury });
    const res = await stack.http.post('/v1/verify').send(p.formA({ payTo: treasury }));
    expectVerificationFailed(res, 'payment must be to merchant address', {
      authorization_to: treasury.toLowerCase(),
      expected_payTo: treasury.toLowerCase(),
      reason: 'the authorization pays the facilitator treasury; payments go directly to the merchant',
    });
  });

  it('amount mismatch', async () => {
    const p = await stack.payment({ value: 9_999n });
    const res = await stack.http.post('/v1/verify').send(p.formA());
    expectVerificationFailed(res, 'amount mismatch', { authorization_value: '9999', expected_amount: '10000' });
  });

  it('token mismatch', async () => {
    const p = await stack.payment();
    const otherToken = Wallet.createRandom().address;
    const res = await stack.http.post('/v1/verify').send(p.formA({ token: otherToken }));
    expectVerificationFailed(res, 'token mismatch', {
      expected_token: otherToken.toLowerCase(),
      supported_token: stack.devnet.token.toLowerCase(),
      reason: `only the token ${stack.devnet.token.toLowerCase()} is settled on eip155:84532`,
    });
  });

  it('authorization expired', async () => {
    const validBefore = now() - 5n;
    const p = await stack.payment({ validBefore });
    const res = await stack.http.post('/v1/verify').send(p.formA());
    expectVerificationFailed(res, 'authorization expired', { validBefore: validBefore.toString(), currentTime: expect.any(String) });
    expect(BigInt(res.body.error.details.currentTime)).toBeGreaterThanOrEqual(validBefore);
  });

  it('an authorization that expires before it could be settled', async () => {
    const validBefore = now() + 3n;
    const p = await stack.payment({ validBefore });
    const res = await stack.http.post('/v1/verify').send(p.formA());
    expectVerificationFailed(res, 'authorization expires too soon to be settled', {
      validBefore: validBefore.toString(),
      currentTime: expect.any(String),
      minimum_validity_seconds: 10,
    });
  });

  it('authorization not yet valid', async () => {
    const validAfter = now() + 600n;
    const p = await stack.payment({ validAfter });
    const res = await stack.http.post('/v1/verify').send(p.formA());
    expectVerificationFailed(res, 'authorization not yet valid', { validAfter: validAfter.toString(), currentTime: expect.any(String) });
  });

  it('nonce already used on chain', async () => {
    const p = await stack.payment();
    const relayer = new Wallet(stack.devnet.accounts.relayers[0].privateKey, stack.devnet.provider);
    const token = stack.devnet.usdc.connect(relayer) as unknown as {
      'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)': (...args: unknown[]) => Promise<{ wait(): Promise<unknown> }>;
    };
    const a = p.authorization;
    const tx = await token['transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)'](
      a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, p.signature,
    );
    await tx.wait();
    const res = await stack.http.post('/v1/verify').send(p.formA());
    expectVerificationFailed(res, 'nonce already used', {
      nonce: a.nonce.toLowerCase(),
      reason: 'the authorization was already used or cancelled on chain',
    });
  });

  it('nonce already used by a settlement of ours', async () => {
    const p = await stack.payment();
    const ok = await stack.http.post('/v1/verify').send(p.formA());
    const a = p.authorization;
    await stack.db.prisma.settlement.create({
      data: {
        id: 'stl_' + 'a'.repeat(32),
        verificationId: ok.body.details.verification_id,
        surface: 'v1',
        state: 'fee_collected',
        chainId: 84532,
        network: 'eip155:84532',
        tokenAddress: stack.devnet.token.toLowerCase(),
        nonceSpace: stack.devnet.token.toLowerCase(),
        payer: a.from.toLowerCase(),
        merchant: a.to.toLowerCase(),
        amount: a.value,
        nonce: a.nonce.toLowerCase(),
        feeAmount: '10000',
      },
    });
    const res = await stack.http.post('/v1/verify').send(p.formA());
    expectVerificationFailed(res, 'nonce already used', {
      nonce: a.nonce.toLowerCase(),
      reason: 'the authorization was already used by a settlement',
      settlement_id: 'stl_' + 'a'.repeat(32),
    });
  });

  it('stores a failed verification as rejected, queryable by id', async () => {
    const p = await stack.payment({ value: 1n });
    const res = await stack.http.post('/v1/verify').send(p.formA());
    const id = res.body.error.details.verification_id;
    const status = await stack.http.get(`/v1/verifications/${id}`);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ id, type: 'verification', status: 'rejected', transaction_hash: null });
    expect(status.body.details.failure).toEqual({ message: 'amount mismatch', details: { authorization_value: '1', expected_amount: '10000' } });
  });
});

describe('check order: a request failing two checks reports the first', () => {
  it('signature before recipient, amount and time', async () => {
    const stranger = Wallet.createRandom();
    const p = await stack.payment({ payerKey: stranger.privateKey, value: 1n, validBefore: now() - 100n });
    const body = p.formA({ payTo: Wallet.createRandom().address });
    (body.payment.payload as { authorization: { from: string } }).authorization.from = stack.devnet.accounts.payer.address;
    expect((await stack.http.post('/v1/verify').send(body)).body.error.message).toBe('invalid signature');
  });

  it('recipient before amount', async () => {
    const p = await stack.payment({ to: Wallet.createRandom().address, value: 1n });
    expect((await stack.http.post('/v1/verify').send(p.formA())).body.error.message).toBe('payment must be to merchant address');
  });

  it('amount before the minimum, the minimum before token', async () => {
    const small = await stack.payment({ value: 5_000n });
    const mismatch = await stack.http.post('/v1/verify').send(small.formA({ price: undefined, amount: '6000' }));
    expect(mismatch.body.error.message).toBe('amount mismatch');
    const wrongToken = await stack.http.post('/v1/verify').send(small.formA({ price: undefined, amount: '5000', token: '0x' + '11'.repeat(20) }));
    expect(wrongToken.body.error.message).toBe('amount below minimum');
  });

  it('amount before token', async () => {
    const p = await stack.payment({ value: 1n });
    const res = await stack.http.post('/v1/verify').send(p.formA({ token: Wallet.createRandom().address }));
    expect(res.body.error.message).toBe('amount mismatch');
  });

  it('token before time', async () => {
    const p = await stack.payment({ validBefore: now() - 100n });
    const res = await stack.http.post('/v1/verify').send(p.formA({ token: Wallet.createRandom().address }));
    expect(res.body.error.message).toBe('token mismatch');
  });

  it('time before nonce', async () => {
    const p = await stack.payment();
    await stack.http.post('/v1/verify').send(p.formA());
    const expired = await stack.payment({ nonce: p.authorization.nonce, validBefore: now() - 1n });
    const a = expired.authorization;
    await stack.db.prisma.settlement.create({
      data: {
        id: 'stl_' + 'b'.repeat(32),
        verificationId: (await stack.db.prisma.verification.findFirstOrThrow({ where: { nonce: a.nonce.toLowerCase() } })).id,
        surface: 'v1', state: 'settled', chainId: 84532, network: 'eip155:84532', tokenAddress: stack.devnet.token.toLowerCase(), nonceSpace: stack.devnet.token.toLowerCase(),
        payer: a.from.toLowerCase(), merchant: a.to.toLowerCase(), amount: a.value, nonce: a.nonce.toLowerCase(), feeAmount: '10000',
      },
    });
    expect((await stack.http.post('/v1/verify').send(expired.formA())).body.error.message).toBe('authorization expired');
  });
});

describe('malformed requests are 400 in the envelope, never 500', () => {
  async function expectInvalid(body: unknown, path?: string, contentType = 'application/json') {
    const req = stack.http.post('/v1/verify').set('Content-Type', contentType);
    const res = await req.send(typeof body === 'string' ? body : JSON.stringify(body));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(typeof res.body.error.message).toBe('string');
    if (path !== undefined) expect(res.body.error.details.errors.map((e: { path: string }) => e.path)).toContain(path);
    return res;
  }

  let valid: Awaited<ReturnType<TestStack['payment']>>;
  beforeAll(async () => {
    valid = await stack.payment();
  });

  const withAuthorization = (field: string, value: unknown) => {
    const body = valid.formA();
    (body.payment.payload as { authorization: Record<string, unknown> }).authorization[field] = value;
    return body;
  };

  it('missing fields, each listed with its JSON path', async () => {
    const body = valid.formA();
    delete (body.payment.payload as { authorization: Record<string, unknown> }).authorization.nonce;
    delete body.requirements.payTo;
    const res = await expectInvalid(body);
    expect(res.body.error.details.errors).toEqual(
      expect.arrayContaining([
        { path: '/payment/payload/authorization/nonce', message: 'is required' },
        { path: '/requirements/payTo', message: 'is required' },
      ]),
    );
  });

  it('no amount at all', async () => {
    const body = valid.formA();
    delete body.requirements.price;
    await expectInvalid(body, '/requirements');
  });

  it.each([
    ['value as a number', 'value', 10000, '/payment/payload/authorization/value'],
    ['bad hex address', 'from', '0xZZ00000000000000000000000000000000000000', '/payment/payload/authorization/from'],
    ['21-byte address', 'to', '0x' + '11'.repeat(21), '/payment/payload/authorization/to'],
    ['short nonce', 'nonce', '0x1234', '/payment/payload/authorization/nonce'],
    ['79-digit value', 'value', '1'.repeat(79), '/payment/payload/authorization/value'],
    ['negative value', 'value', '-1', '/payment/payload/authorization/value'],
    ['decimal value', 'value', '1.5', '/payment/payload/authorization/value'],
    ['null validBefore', 'validBefore', null, '/payment/payload/authorization/validBefore'],
  ])('%s', async (_name, field, value, path) => {
    await expectInvalid(withAuthorization(field, value), path);
  });

  it('a 78-digit value beyond uint256', async () => {
    const res = await expectInvalid(withAuthorization('value', '9'.repeat(78)), '/payment/payload/authorization/value');
    expect(res.body.error.details.errors[0].message).toContain('does not fit in uint256');
  });

  it('bad signature hex', async () => {
    const body = valid.formA();
    (body.payment.payload as { signature: string }).signature = '0xnothex';
    await expectInvalid(body, '/payment/payload/signature');
  });

  it('wrong x402Version for Form A', async () => {
    const body = valid.formA();
    body.payment.x402Version = 1;
    await expectInvalid(body, '/payment/x402Version');
  });

  it('non-JSON', async () => {
    const res = await expectInvalid('{"payment": ', undefined);
    expect(res.body.error.message).toBe('request body is not valid JSON');
  });

  it('a JSON array, a string, null', async () => {
    await expectInvalid([1, 2]);
    await expectInvalid('"text"');
    await expectInvalid('null');
  });

  it('not JSON at all (text/plain)', async () => {
    const res = await expectInvalid('hello', undefined, 'text/plain');
    expect(res.body.error.message).toContain('JSON object');
  });

  it('deep nesting in free-form metadata', async () => {
    const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    const body = JSON.stringify(valid.formB()).replace('"source":"test"', `"source":"test","deep":${deep}`);
    const res = await stack.http.post('/v1/verify').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'request body is nested more than 32 levels deep' });
  });

  it.each([
    ['a NUL character', '"source":"te\\u0000st"'],
    ['an unpaired surrogate', '"source":"\\ud800"'],
    ['an unpaired surrogate in a key', '"\\udc00":1,"source":"test"'],
  ])('text Postgres cannot store: %s', async (_name, replacement) => {
    const body = JSON.stringify(valid.formB()).replace('"source":"test"', replacement);
    const res = await stack.http.post('/v1/verify').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toContain('NUL character or an unpaired UTF-16 surrogate');
  });

  it.each(['gzip', 'deflate', 'br'])('a body that claims %s encoding but is not', async (encoding) => {
    const res = await stack.http.post('/v1/verify').set('Content-Type', 'application/json').set('Content-Encoding', encoding).send('not compressed at all');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  it('an oversized body is 413 in the envelope', async () => {
    const body = valid.formB();
    (body.metadata as Record<string, unknown>).padding = 'x'.repeat(70 * 1024);
    const res = await stack.http.post('/v1/verify').send(body);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  it('an unknown network', async () => {
    const res = await stack.http.post('/v1/verify').send(valid.formA({ network: 'eip155:1' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'unsupported_network',
      message: 'network "eip155:1" is not supported here',
      details: { network: 'eip155:1', supported: ['eip155:84532'] },
    });
  });

  it('a known network that is not enabled (no RPC URL)', async () => {
    const res = await stack.http.post('/v1/verify').send(valid.formA({ network: 'eip155:8453' }));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('unsupported_network');
  });

  it('a short network name in Form A', async () => {
    const res = await stack.http.post('/v1/verify').send(valid.formA({ network: 'base-sepolia' }));
    expect(res.body.error.code).toBe('unsupported_network');
  });

  it('an unknown route is 404 in the envelope', async () => {
    const res = await stack.http.get('/v1/nothing');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('GET /v1/verifications/{id}', () => {
  it('returns the status record', async () => {
    const p = await stack.payment();
    const ok = await stack.http.post('/v1/verify').send(p.formB());
    const res = await stack.http.get(`/v1/verifications/${ok.body.verification_id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: ok.body.verification_id,
      type: 'verification',
      status: 'verified',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      transaction_hash: null,
      chain: 'layer2-sepolia',
      details: {
        seller_address: stack.devnet.accounts.merchant.address.toLowerCase(),
        expected_amount: '10000',
        verified_amount: '10000',
        payer_address: stack.devnet.accounts.payer.address.toLowerCase(),
        token: stack.devnet.token.toLowerCase(),
        nonce: p.authorization.nonce.toLowerCase(),
        metadata: expect.objectContaining({ source: 'test' }),
      },
    });
  });

  it('unknown and malformed ids are 404 not_found', async () => {
    for (const id of ['ver_' + '0'.repeat(32), 'nope', 'ver_' + 'x'.repeat(500)]) {
      const res = await stack.http.get(`/v1/verifications/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });

  it('requires a valid X-API-Key when API_KEYS is set', async () => {
    const keyed = buildApi(loadConfig({ ...stack.env, API_KEYS: 'key-one,key-two' }), createSilentLogger());
    try {
      const p = await stack.payment();
      const ok = await stack.http.post('/v1/verify').send(p.formA());
      const path = `/v1/verifications/${ok.body.details.verification_id}`;
      const http = supertest(keyed.app);
      expect((await http.get(path)).status).toBe(401);
      expect((await http.get(path)).body.error.code).toBe('unauthorized');
      expect((await http.get(path).set('X-API-Key', 'key-three')).status).toBe(401);
      expect((await http.get(path).set('X-API-Key', 'key-one')).status).toBe(200);
      expect((await http.get(path).set('X-API-Key', 'key-two')).status).toBe(200);
      // verify itself stays public, as the spec says
      expect((await http.post('/v1/verify').send((await stack.payment()).formA())).status).toBe(200);
    } finally {
      await keyed.close();
    }
  });
});

describe('Idempotency-Key on verify', () => {
  it('replays the stored answer for the same key and body', async () => {
    const p = await stack.payment();
    const key = `k-${hexlify(randomBytes(8))}`;
    const first = await stack.http.post('/v1/verify').set('Idempotency-Key', key).send(p.formA());
    const second = await stack.http.post('/v1/verify').set('Idempotency-Key', key).send(p.formA());
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await stack.db.prisma.verification.count({ where: { nonce: p.authorization.nonce.toLowerCase() } })).toBe(1);
  });

  it('replays a failed verification too', async () => {
    const p = await stack.payment({ value: 5n });
    const key = `k-${hexlify(randomBytes(8))}`;
    const first = await stack.http.post('/v1/verify').set('Idempotency-Key', key).send(p.formA());
    const second = await stack.http.post('/v1/verify').set('Idempotency-Key', key).send(p.formA());
    expect(first.status).toBe(400);
    expect(second.status).toBe(400);
    expect(second.body).toEqual(first.body);
  });

  it('is 422 for the same key with a different body', async () => {
    const key = `k-${hexlify(randomBytes(8))}`;
    await stack.http.post('/v1/verify').set('Idempotency-Key', key).send((await stack.payment()).formA());
    const res = await stack.http.post('/v1/verify').set('Idempotency-Key', key).send((await stack.payment()).formA());
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('idempotency_key_reused');
  });

  it('is 409 while a request with the key is still in flight', async () => {
    const p = await stack.payment();
    const key = `k-${hexlify(randomBytes(8))}`;
    const { createHash } = await import('node:crypto');
    const { canonicalJson } = await import('@facilitator/core');
    const hash = createHash('sha256').update(canonicalJson(p.formA())).digest('hex');
    // keys are scoped per client (issue 13): this client is the one with API key "client-409"
    const scope = `verify:key:${createHash('sha256').update('client-409').digest('hex')}`;
    const claim = await new IdempotencyRepository(stack.db.prisma).claim(scope, key, hash, 3600);
    expect(claim.kind).toBe('claimed');
    const res = await stack.http.post('/v1/verify').set('Idempotency-Key', key).set('X-API-Key', 'client-409').send(p.formA());
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('idempotency_key_in_flight');
  });

  it('concurrent requests with one key do the work once', async () => {
    const p = await stack.payment();
    const key = `k-${hexlify(randomBytes(8))}`;
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => stack.http.post('/v1/verify').set('Idempotency-Key', key).send(p.formA())),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    expect(await stack.db.prisma.verification.count({ where: { nonce: p.authorization.nonce.toLowerCase() } })).toBe(1);
  });

  it('a key expires after its TTL and can be used again', async () => {
    const p = await stack.payment();
    const key = `k-${hexlify(randomBytes(8))}`;
    await stack.http.post('/v1/verify').set('Idempotency-Key', key).send(p.formA());
    expect(await stack.db.prisma.idempotencyKey.updateMany({ where: { key }, data: { expiresAt: new Date(Date.now() - 1000) } })).toEqual({ count: 1 });
    const other = await stack.http.post('/v1/verify').set('Idempotency-Key', key).send((await stack.payment()).formA());
    expect(other.status).toBe(200);
  });
});
