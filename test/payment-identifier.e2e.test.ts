// The x402 payment-identifier extension and the public settlement lookup, end to end: payments signed by
// @x402/evm's client carrying the id as a real client attaches it (@x402/extensions), the API over real
// HTTP, the compiled worker, anvil with Circle's USDC; fees and transfers counted on chain.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { getAddress } from 'ethers';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension, generatePaymentId, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { privateKeyToAccount } from 'viem/accounts';
import { balances, difference, transfersOnChain } from './support/chain-actions';
import { startTestStack, type TestStack } from './support/test-stack';

const FEE = 10_000n;
const PRICE = 50_000n;
const NETWORK = 'eip155:84532';

let stack: TestStack;
let server: Server;
let base: string;
let facilitator: HTTPFacilitatorClient;
let worker: Promise<unknown> | undefined;
/** The worker starts late: the first test needs a settlement that stays pending while its client gives up. */
const ensureWorker = () => (worker ??= stack.startWorker());

beforeAll(async () => {
  stack = await startTestStack();
  server = await new Promise<Server>((resolve) => {
    const s = stack.api.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  facilitator = new HTTPFacilitatorClient({ url: `${base}/x402` });
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await stack?.stop();
});

function requirements(): PaymentRequirements {
  return {
    scheme: 'exact',
    network: NETWORK,
    amount: PRICE.toString(),
    asset: getAddress(stack.devnet.token),
    payTo: getAddress(stack.devnet.accounts.merchant.address),
    maxTimeoutSeconds: 300,
    extra: { name: 'USDC', version: '2' },
  };
}

/** What a buyer's x402 client sends: a payment signed by @x402/evm, with the payment identifier appended as @x402/extensions does. */
async function pay(req: PaymentRequirements, paymentId: string): Promise<PaymentPayload> {
  const client = new x402Client()
    .register('eip155:*', new ExactEvmScheme(privateKeyToAccount(stack.devnet.accounts.payer.privateKey as `0x${string}`)))
    .setSpendControls({ allowedAssets: [{ network: NETWORK, asset: getAddress(stack.devnet.token), maxAmountPerPayment: '1000000' }] });
  const payload = await client.createPaymentPayload({ x402Version: 2, resource: { url: 'http://merchant.test/weather' }, accepts: [req] });
  // the resource server declared the extension; the client appends its id to the declaration it echoes
  return { ...payload, extensions: appendPaymentIdentifierToExtensions({ [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension() }, paymentId) };
}

const authorizationOf = (payload: PaymentPayload) => payload.payload.authorization as { from: string; nonce: string };

async function lookup(query: Record<string, string>) {
  return stack.http.get('/v1/settlements/lookup').query({ network: NETWORK, ...query });
}

/** Asks the lookup until `done` holds (the worker's progress is not an event this process can await). */
async function lookupUntil(query: Record<string, string>, done: (status: number, body: { settlements?: Array<{ status: string }> }) => boolean) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await lookup(query);
    if (done(res.status, res.body) || Date.now() > deadline) return res;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('a client that lost the answer of its settle', () => {
  it('aborts the settle before the answer, then learns by each key that it settled, once', async () => {
    const paymentId = generatePaymentId();
    const req = requirements();
    const payload = await pay(req, paymentId);
    const { from, nonce } = authorizationOf(payload);
    const startBlock = (await stack.devnet.provider.getBlockNumber()) + 1;
    const before = await balances(stack.devnet);

    // no worker yet: the settle is admitted and waits; the client gives up before any answer
    const aborter = new AbortController();
    const settling = fetch(`${base}/x402/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: req }),
      signal: aborter.signal,
    });
    const pending = await lookupUntil({ payment_id: paymentId }, (status) => status === 200);
    expect(pending.status).toBe(200);
    expect(pending.body.settlements).toEqual([expect.objectContaining({ status: 'pending', transaction_hash: null, finality: null })]);
    aborter.abort();
    await expect(settling).rejects.toThrow();

    await ensureWorker();
    const settled = await lookupUntil({ payment_id: paymentId }, (_status, body) => body.settlements?.[0]?.status === 'settled');
    expect(settled.status).toBe(200);
    const [record] = settled.body.settlements as Array<Record<string, unknown>>;
    expect(record).toEqual({
      type: 'settlement',
      status: 'settled',
      network: NETWORK,
      transaction_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      settled_at: expect.any(String),
      details: {
        destination_address: stack.devnet.accounts.merchant.address.toLowerCase(),
        payer_address: from.toLowerCase(),
        nonce: nonce.toLowerCase(),
        amount: PRICE.toString(),
        settled_amount: PRICE.toString(),
        fee_collection_status: 'collected',
        fee_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      },
      finality: { status: expect.stringMatching(/^(watching|final)$/), reorgs: 0 },
    });
    // nothing of ours: no ids that would open the full record, no metadata
    expect(JSON.stringify(settled.body)).not.toMatch(/stl_|ver_|metadata/);

    // the same answer by transaction, and by payer and nonce (either case of hex)
    const byTx = await lookup({ transaction: (record.transaction_hash as string).toUpperCase().replace('0X', '0x') });
    expect(byTx.status).toBe(200);
    expect(byTx.body.settlements).toEqual([record]);
    const byPayerNonce = await lookup({ payer: getAddress(from), nonce });
    expect(byPayerNonce.status).toBe(200);
    expect(byPayerNonce.body.settlements).toEqual([record]);

    // it settled once: one fee and one transfer on chain
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });
    expect(await transfersOnChain(stack.devnet, startBlock, from, stack.devnet.accounts.merchant.address)).toBe(1);
    expect(await transfersOnChain(stack.devnet, startBlock, stack.devnet.accounts.merchant.address, stack.devnet.accounts.treasury.address)).toBe(1);

    // and settling it again with its identifier answers that settlement, charging nobody again
    const again = await facilitator.settle(payload, req);
    expect(again).toMatchObject({ success: true, transaction: record.transaction_hash });
    expect(await transfersOnChain(stack.devnet, startBlock, from, stack.devnet.accounts.merchant.address)).toBe(1);
  });
});

describe('payment-identifier on /x402', () => {
  beforeAll(() => ensureWorker());

  it('is advertised in /supported', async () => {
    expect((await facilitator.getSupported()).extensions).toEqual(['payment-identifier', 'eip2612GasSponsoring', 'bazaar']);
  });

  it('the same identifier twice settles once: one settlement, one fee, one transfer on chain', async () => {
    const paymentId = generatePaymentId();
    const req = requirements();
    const payload = await pay(req, paymentId);
    const { from, nonce } = authorizationOf(payload);
    const startBlock = (await stack.devnet.provider.getBlockNumber()) + 1;
    const before = await balances(stack.devnet);

    expect(await facilitator.verify(payload, req)).toEqual({ isValid: true, payer: getAddress(from) });
    const [first, second] = await Promise.all([facilitator.settle(payload, req), facilitator.settle(payload, req)]);
    expect(first).toMatchObject({ success: true });
    expect(second).toEqual(first);
    const third = await facilitator.settle(payload, req);
    expect(third).toEqual(first);

    expect(await stack.db.prisma.settlement.count({ where: { nonce: nonce.toLowerCase() } })).toBe(1);
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });
    expect(await transfersOnChain(stack.devnet, startBlock, from, stack.devnet.accounts.merchant.address)).toBe(1);
    expect(await transfersOnChain(stack.devnet, startBlock, stack.devnet.accounts.merchant.address, stack.devnet.accounts.treasury.address)).toBe(1);
  });

  it('a different payment under the same identifier is refused, by verify and by settle, and nothing moves', async () => {
    const paymentId = generatePaymentId();
    const req = requirements();
    const payload = await pay(req, paymentId);
    expect((await facilitator.verify(payload, req)).isValid).toBe(true);

    const other = await pay(req, paymentId);
    const before = await balances(stack.devnet);
    expect(await facilitator.verify(other, req)).toEqual({
      isValid: false,
      invalidReason: 'payment_identifier_conflict',
      invalidMessage: expect.stringContaining(`payment identifier "${paymentId}" is already bound to another payment`),
      payer: getAddress(authorizationOf(other).from),
    });
    expect(await facilitator.settle(other, req)).toMatchObject({
      success: false,
      errorReason: 'payment_identifier_conflict',
      errorMessage: expect.stringContaining('already bound to another payment'),
    });
    expect(await stack.db.prisma.settlement.count({ where: { nonce: authorizationOf(other).nonce.toLowerCase() } })).toBe(0);
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });

    // the first payment is still its identifier's, and settles
    expect(await facilitator.settle(payload, req)).toMatchObject({ success: true });
  });

  it('a malformed identifier is an invalid payload (400), not ignored', async () => {
    const req = requirements();
    const payload = await pay(req, generatePaymentId());
    const malformed = { ...payload, extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id: 'short!' } } } };
    await expect(facilitator.verify(malformed, req)).rejects.toThrow(/^invalid_payload: .*\/paymentPayload\/extensions\/payment-identifier\/info\/id must NOT have fewer than 16 characters/);
  });
});

describe('payment-identifier on /v1 (Form A), beside Idempotency-Key', () => {
  beforeAll(() => ensureWorker());

  const withId = (formA: { payment: Record<string, unknown>; requirements: Record<string, unknown> }, paymentId: string) => ({
    ...formA,
    payment: { ...formA.payment, extensions: { [PAYMENT_IDENTIFIER]: { info: { required: false, id: paymentId } } } },
  });

  it('both work together: a key replays its answer, the identifier binds the payment, a conflict is a 409 in the envelope', async () => {
    const paymentId = `order_${randomBytes(12).toString('hex')}`;
    const body = withId((await stack.payment()).formA(), paymentId);
    const key = `key-${randomBytes(8).toString('hex')}`;

    const first = await stack.http.post('/v1/verify').set('Idempotency-Key', key).send(body);
    expect(first.status).toBe(200);
    expect(first.body.isValid).toBe(true);
    const replay = await stack.http.post('/v1/verify').set('Idempotency-Key', key).send(body);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);

    // the same payment and identifier under a new key: verified again
    const again = await stack.http.post('/v1/verify').set('Idempotency-Key', `${key}-2`).send(body);
    expect(again.status).toBe(200);

    // another payment, the same identifier: 409 payment_identifier_conflict, with or without a key
    const other = withId((await stack.payment()).formA(), paymentId);
    for (const res of [await stack.http.post('/v1/verify').send(other), await stack.http.post('/v1/verify').set('Idempotency-Key', `${key}-3`).send(other)]) {
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: { code: 'payment_identifier_conflict', message: expect.stringContaining('already bound to another payment'), details: { payment_id: paymentId } } });
    }
    // the key's own rule comes first: reused with another body is 422
    expect((await stack.http.post('/v1/verify').set('Idempotency-Key', key).send(other)).status).toBe(422);

    // settle: the bound payment settles once, the other is refused
    const settled = await stack.http.post('/v1/settle').send(body);
    expect(settled.status).toBe(200);
    expect(settled.body.success).toBe(true);
    expect((await stack.http.post('/v1/settle').send(body)).body.details.settlement_id).toBe(settled.body.details.settlement_id);
    const refused = await stack.http.post('/v1/settle').send(other);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('payment_identifier_conflict');

    const found = await lookup({ payment_id: paymentId });
    expect(found.status).toBe(200);
    expect(found.body.settlements).toEqual([expect.objectContaining({ status: 'settled', transaction_hash: settled.body.details.settlement_tx_hash })]);
  });
});

describe('GET /v1/settlements/lookup refuses bad input and unknown keys', () => {
  it.each([
    ['bad hex', { transaction: '0x' + 'zz'.repeat(32) }],
    ['a short hash', { transaction: '0x' + 'ab'.repeat(31) }],
    ['two keys', { transaction: '0x' + 'ab'.repeat(32), payment_id: generatePaymentId() }],
    ['a payer without a nonce', { payer: '0x' + '11'.repeat(20) }],
    ['no key', {}],
    ['a malformed identifier', { payment_id: 'short' }],
  ])('%s: 400 invalid_request', async (_name, query) => {
    const res = await lookup(query as Record<string, string>);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  it('an unknown network: 400 unsupported_network', async () => {
    const res = await stack.http.get('/v1/settlements/lookup').query({ network: 'eip155:1', payment_id: generatePaymentId() });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('unsupported_network');
  });

  it('unknown keys: 404 not_found in the envelope', async () => {
    const unknown: Array<Record<string, string>> = [
      { payment_id: generatePaymentId() },
      { transaction: '0x' + randomBytes(32).toString('hex') },
      { payer: '0x' + randomBytes(20).toString('hex'), nonce: '0x' + randomBytes(32).toString('hex') },
    ];
    for (const query of unknown) {
      const res = await lookup(query);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
  });
});
