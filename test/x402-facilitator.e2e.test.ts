// The standard x402 facilitator endpoints under /x402, driven by @x402/core's own HTTPFacilitatorClient
// with payments signed by @x402/evm's exact client, against anvil with Circle's USDC and the worker.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { getAddress } from 'ethers';
import { x402Client } from '@x402/core/client';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { privateKeyToAccount } from 'viem/accounts';
import { exact as exactV1 } from 'x402/schemes';
import { createSigner as createSignerV1, ErrorReasons as ErrorReasonsV1, type PaymentRequirements as V1Requirements } from 'x402/types';
import { useFacilitator } from 'x402/verify';
import { balances, difference, newMerchant } from './support/chain-actions';
import { startTestStack, type TestStack } from './support/test-stack';

const FEE = 10_000n;
const PRICE = 50_000n;
const HASH = /^0x[0-9a-f]{64}$/;

let stack: TestStack;
let server: Server;
let facilitator: HTTPFacilitatorClient;
let payer: string;

beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
  server = await new Promise<Server>((resolve) => {
    const s = stack.api.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  facilitator = new HTTPFacilitatorClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x402` });
  payer = getAddress(stack.devnet.accounts.payer.address);
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await stack?.stop();
});

function requirements(overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'eip155:84532',
    amount: PRICE.toString(),
    asset: getAddress(stack.devnet.token),
    payTo: getAddress(stack.devnet.accounts.merchant.address),
    maxTimeoutSeconds: 300,
    extra: { name: 'USDC', version: '2' },
    ...overrides,
  };
}

/** What a buyer's x402 client sends for these requirements, signed by @x402/evm. */
async function pay(req: PaymentRequirements): Promise<PaymentPayload> {
  const client = new x402Client()
    .register('eip155:*', new ExactEvmScheme(privateKeyToAccount(stack.devnet.accounts.payer.privateKey as `0x${string}`)))
    // the devnet's USDC is not one of @x402/evm's known assets: the buyer opts in to it, capped
    .setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: getAddress(stack.devnet.token), maxAmountPerPayment: '1000000' }] });
  return client.createPaymentPayload({ x402Version: 2, resource: { url: 'http://merchant.test/weather' }, accepts: [req] });
}

const nonceOf = (payload: PaymentPayload) => String((payload.payload.authorization as { nonce: string }).nonce).toLowerCase();

describe('GET /x402/supported', () => {
  it('lists exact on every enabled network in both protocol versions, upto in v2 with the facilitator its payer names, and our signers', async () => {
    const supported = await facilitator.getSupported();
    expect(supported.kinds).toEqual([
      expect.objectContaining({ x402Version: 2, scheme: 'exact', network: 'eip155:84532' }),
      { x402Version: 2, scheme: 'upto', network: 'eip155:84532', extra: { facilitatorAddress: getAddress(stack.devnet.accounts.treasury.address) } },
      expect.objectContaining({ x402Version: 1, scheme: 'exact', network: 'base-sepolia' }),
    ]);
    expect(supported.extensions).toEqual(['payment-identifier', 'eip2612GasSponsoring', 'bazaar']);
    const { relayers, treasury } = stack.devnet.accounts;
    expect(supported.signers).toEqual({ 'eip155:*': [...relayers.map((r) => getAddress(r.address)), getAddress(treasury.address)] });
  });
});

describe('POST /x402/verify', () => {
  it('verifies a payment signed by @x402/evm, free, and stores it like /v1 does', async () => {
    const req = requirements();
    const payload = await pay(req);
    const before = await balances(stack.devnet);
    expect(await facilitator.verify(payload, req)).toEqual({ isValid: true, payer });
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
    const stored = await stack.db.prisma.verification.findFirstOrThrow({ where: { nonce: nonceOf(payload) } });
    expect(stored).toMatchObject({ status: 'verified', surface: 'x402', protocolVersion: 2, network: 'eip155:84532', amount: '50000' });
  });

  it('a wrong amount is isValid false with the specification reason', async () => {
    const req = requirements();
    // the buyer signs for less than asked but claims to accept the merchant's requirements
    const tampered = { ...(await pay(requirements({ amount: '49999' }))), accepted: req };
    expect(await facilitator.verify(tampered, req)).toEqual({
      isValid: false,
      invalidReason: 'invalid_exact_evm_payload_authorization_value',
      invalidMessage: 'amount mismatch: the authorization pays 49999, the requirements ask for 50000',
      payer,
    });
    const stored = await stack.db.prisma.verification.findFirstOrThrow({ where: { nonce: nonceOf(tampered) } });
    expect(stored).toMatchObject({ status: 'rejected', surface: 'x402', failureMessage: 'amount mismatch' });
  });

  it('maps the engine reasons: recipient, asset, expiry', async () => {
    const req = requirements();
    const otherPayTo = { ...(await pay(requirements({ payTo: getAddress(stack.devnet.accounts.treasury.address) }))), accepted: req };
    expect(await facilitator.verify(otherPayTo, req)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_payload_recipient_mismatch' });

    const otherAsset = requirements({ asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' });
    expect(await facilitator.verify(await pay(otherAsset), otherAsset)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_payment_requirements',
      invalidMessage: expect.stringContaining(stack.devnet.token.toLowerCase()),
    });

    // @x402/evm signs validBefore = now + maxTimeoutSeconds; 5 s is inside our 10 s settle margin
    const short = requirements({ maxTimeoutSeconds: 5 });
    expect(await facilitator.verify(await pay(short), short)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_payload_authorization_valid_before',
      invalidMessage: expect.stringContaining('authorization expires too soon to be settled'),
    });
  });

  it('refuses requirements whose extra.name / extra.version disagree with the token, with a clear reason', async () => {
    const wrongName = requirements({ extra: { name: 'USD Coin', version: '2' } });
    const payload = await pay(wrongName);
    expect(await facilitator.verify(payload, wrongName)).toEqual({
      isValid: false,
      invalidReason: 'invalid_exact_evm_token_name_mismatch',
      invalidMessage: expect.stringContaining('signs under the name "USDC"'),
      payer,
    });
    expect(await stack.db.prisma.verification.findFirstOrThrow({ where: { nonce: nonceOf(payload) } })).toMatchObject({
      status: 'rejected',
      surface: 'x402',
      failureMessage: 'EIP-712 domain name mismatch',
    });

    const wrongVersion = requirements({ extra: { name: 'USDC', version: '1' } });
    expect(await facilitator.verify(await pay(wrongVersion), wrongVersion)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_token_version_mismatch',
    });

    // signed under the right domain, but the requirements claim another: still refused, not silently valid
    const right = await pay(requirements());
    const claimsOther = requirements({ extra: { name: 'USD Coin', version: '2' } });
    expect(await facilitator.verify({ ...right, accepted: claimsOther }, claimsOther)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_token_name_mismatch',
    });

    // settle refuses it the same way, and nothing moves
    const before = await balances(stack.devnet);
    expect(await facilitator.settle(payload, wrongName)).toEqual({
      success: false,
      errorReason: 'invalid_exact_evm_token_name_mismatch',
      errorMessage: expect.any(String),
      payer,
      transaction: '',
      network: 'eip155:84532',
    });
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
  });
});

describe('POST /x402/settle', () => {
  it('settles through the worker, fee first: payer -price, merchant +price -fee, treasury +fee', async () => {
    const req = requirements();
    const payload = await pay(req);
    expect((await facilitator.verify(payload, req)).isValid).toBe(true);
    const before = await balances(stack.devnet);
    const settled = await facilitator.settle(payload, req);
    // x402 v2 lets the answer name the amount paid; the merchant paid is in `extra.payTo`
    expect(settled).toEqual({
      success: true, payer, transaction: expect.stringMatching(HASH), network: 'eip155:84532',
      amount: PRICE.toString(), extra: { payTo: stack.devnet.accounts.merchant.address.toLowerCase() },
    });
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });

    const receipt = await stack.devnet.provider.getTransactionReceipt(settled.transaction);
    expect(receipt!.status).toBe(1);
    const settlement = await stack.db.prisma.settlement.findFirstOrThrow({ where: { nonce: nonceOf(payload) } });
    expect(settlement).toMatchObject({ surface: 'x402', state: 'settled', settlementTxHash: settled.transaction, feeAmount: '10000' });
    const history = await stack.db.prisma.settlementTransition.findMany({ where: { settlementId: settlement.id }, orderBy: { id: 'asc' } });
    expect(history.map((h) => h.toState)).toEqual(['pending', 'check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);

    // settling the same payment again answers the first result and charges nobody again
    const again = await facilitator.settle(payload, req);
    expect(again).toEqual(settled);
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });
    expect(await stack.db.prisma.settlement.count({ where: { nonce: nonceOf(payload) } })).toBe(1);

    // and the nonce can no longer be verified
    expect(await facilitator.verify(payload, req)).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });
  });

  it('verifies a payment that was never verified before settling it (x402 settle re-verifies)', async () => {
    const req = requirements();
    const payload = await pay(req);
    const before = await balances(stack.devnet);
    expect(await facilitator.settle(payload, req)).toMatchObject({ success: true, transaction: expect.stringMatching(HASH) });
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });
    const verification = await stack.db.prisma.verification.findFirstOrThrow({ where: { nonce: nonceOf(payload) } });
    expect(verification).toMatchObject({ status: 'verified', surface: 'x402' });
  });

  it('an invalid payment is not settled: success false with the verify reason', async () => {
    const req = requirements();
    const tampered = { ...(await pay(requirements({ amount: '1' }))), accepted: req };
    const before = await balances(stack.devnet);
    expect(await facilitator.settle(tampered, req)).toEqual({
      success: false,
      errorReason: 'invalid_exact_evm_payload_authorization_value',
      errorMessage: expect.stringContaining('amount mismatch'),
      payer,
      transaction: '',
      network: 'eip155:84532',
    });
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
  });

  it('no fee allowance: success false with our documented reason, nothing charged; after approving it settles', async () => {
    const merchant = await newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 0n });
    const req = requirements({ payTo: getAddress(merchant.address) });
    const payload = await pay(req);
    expect((await facilitator.verify(payload, req)).isValid).toBe(true);
    const before = await balances(stack.devnet, merchant.address);
    const res = await facilitator.settle(payload, req);
    expect(res).toEqual({
      success: false,
      errorReason: 'insufficient_fee_allowance',
      errorMessage: expect.stringContaining(`must approve the treasury ${stack.devnet.accounts.treasury.address.toLowerCase()}`),
      payer,
      transaction: '',
      network: 'eip155:84532',
    });
    expect(res.errorMessage).toContain('allowance 0, fee 10000');
    expect(difference(await balances(stack.devnet, merchant.address), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });

    await stack.devnet.approveTreasury(merchant.privateKey, 1_000_000n);
    expect(await facilitator.settle(payload, req)).toMatchObject({ success: true, transaction: expect.stringMatching(HASH) });
    expect(difference(await balances(stack.devnet, merchant.address), before)).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });
  });

  it('allowance but no balance for the fee: fee_collection_failed, nothing charged', async () => {
    const merchant = await newMerchant(stack.devnet, { balance: 0n, allowance: 1_000_000n });
    const req = requirements({ payTo: getAddress(merchant.address) });
    const payload = await pay(req);
    const before = await balances(stack.devnet, merchant.address);
    expect(await facilitator.settle(payload, req)).toMatchObject({ success: false, errorReason: 'fee_collection_failed', transaction: '' });
    expect(difference(await balances(stack.devnet, merchant.address), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
  });
});

describe('requests the x402 endpoints cannot take', () => {
  it('answers 400 in the standard shape with the specification reason', async () => {
    const req = requirements();
    const payload = await pay(req);
    const body = { x402Version: 2, paymentPayload: payload, paymentRequirements: req };

    const noVersion = await stack.http.post('/x402/verify').send({});
    expect(noVersion.status).toBe(400);
    expect(noVersion.body).toEqual({ isValid: false, invalidReason: 'invalid_x402_version', invalidMessage: 'x402Version is missing; send 1 or 2 (at the top of the body or in paymentPayload)' });

    const noSignature = structuredClone(body) as { paymentPayload: { payload: Record<string, unknown> } };
    delete noSignature.paymentPayload.payload.signature;
    const malformed = await stack.http.post('/x402/verify').send(noSignature);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({
      isValid: false,
      invalidReason: 'invalid_payload',
      invalidMessage: expect.stringContaining('/paymentPayload/payload/signature is required'),
      payer,
    });

    const badRequirements = await stack.http.post('/x402/verify').send({ ...body, paymentRequirements: { ...req, amount: '-1' } });
    expect(badRequirements.body.invalidReason).toBe('invalid_payment_requirements');

    const mainnet = { ...req, network: 'eip155:8453' };
    const otherNetwork = await stack.http.post('/x402/verify').send({ x402Version: 2, paymentPayload: { ...payload, accepted: mainnet }, paymentRequirements: mainnet });
    expect(otherNetwork.status).toBe(400);
    expect(otherNetwork.body).toMatchObject({ isValid: false, invalidReason: 'invalid_network', invalidMessage: expect.stringContaining('eip155:84532') });

    // an upto request carrying an EIP-3009 payload is never read as an exact payment
    const upto = { ...req, scheme: 'upto' };
    const uptoWithEip3009 = await stack.http.post('/x402/settle').send({ x402Version: 2, paymentPayload: { ...payload, accepted: upto }, paymentRequirements: upto });
    expect(uptoWithEip3009.status).toBe(400);
    expect(uptoWithEip3009.body).toMatchObject({ success: false, errorReason: 'invalid_payload', errorMessage: expect.stringContaining('is not an "upto" payment this network settles') });
    // nor is upto taken in x402 v1, whose payloads are EIP-3009's
    const v1Upto = await stack.http.post('/x402/settle').send({ x402Version: 1, paymentPayload: { x402Version: 1, scheme: 'upto', network: 'base-sepolia', payload: payload.payload }, paymentRequirements: { scheme: 'upto', network: 'base-sepolia', maxAmountRequired: req.amount, asset: req.asset, payTo: req.payTo } });
    expect(v1Upto.body).toMatchObject({ success: false, errorReason: 'unsupported_scheme' });

    const deferred = { ...req, scheme: 'deferred' };
    const otherScheme = await stack.http.post('/x402/settle').send({ x402Version: 2, paymentPayload: { ...payload, accepted: deferred }, paymentRequirements: deferred });
    expect(otherScheme.status).toBe(400);
    expect(otherScheme.body).toEqual({
      success: false,
      errorReason: 'unsupported_scheme',
      errorMessage: expect.any(String),
      payer,
      transaction: '',
      network: 'eip155:84532',
    });

    const versions = await stack.http.post('/x402/verify').send({ ...body, x402Version: 1 });
    expect(versions.body.invalidReason).toBe('invalid_x402_version');

    // valid JSON that Postgres cannot keep with the verification record
    for (const text of ['a\u0000b', 'x\uD800y']) {
      const unstorable = await stack.http.post('/x402/settle').send({ ...body, paymentRequirements: { ...req, description: text } });
      expect(unstorable.status).toBe(400);
      expect(unstorable.body).toMatchObject({ success: false, errorReason: 'invalid_payload', errorMessage: expect.stringContaining('/paymentRequirements/description') });
    }
  });

  it('HTTPFacilitatorClient reports a 400 as a VerifyError carrying the reason', async () => {
    const req = requirements({ network: 'eip155:1' });
    const payload = await pay(requirements());
    await expect(facilitator.verify({ ...payload, accepted: req }, req)).rejects.toMatchObject({
      name: 'VerifyError',
      statusCode: 400,
      invalidReason: 'invalid_network',
    });
  });
});

describe('x402Version 1 wire format, through x402 1.x’s own useFacilitator', () => {
  async function v1Payment(overrides: Partial<V1Requirements> = {}) {
    const req: V1Requirements = {
      scheme: 'exact',
      network: 'base-sepolia',
      maxAmountRequired: PRICE.toString(),
      resource: 'http://merchant.test/weather',
      description: '',
      mimeType: 'application/json',
      payTo: getAddress(stack.devnet.accounts.merchant.address),
      maxTimeoutSeconds: 60,
      asset: getAddress(stack.devnet.token),
      extra: { name: 'USDC', version: '2' },
      ...overrides,
    };
    const signer = await createSignerV1('base-sepolia', stack.devnet.accounts.payer.privateKey);
    return { req, payload: await exactV1.evm.createPayment(signer as never, 1, req) };
  }

  it('verifies and settles a v1 payment, answering with the v1 network name', async () => {
    const v1 = useFacilitator({ url: facilitator.url as `${string}://${string}` });
    const { req, payload } = await v1Payment();
    expect(await v1.verify(payload, req)).toEqual({ isValid: true, payer });
    const before = await balances(stack.devnet);
    expect(await v1.settle(payload, req)).toEqual({ success: true, payer, transaction: expect.stringMatching(HASH), network: 'base-sepolia' });
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });
    const stored = await stack.db.prisma.verification.findFirstOrThrow({ where: { nonce: (payload.payload as { authorization: { nonce: string } }).authorization.nonce.toLowerCase() } });
    expect(stored).toMatchObject({ surface: 'x402', protocolVersion: 1, networkName: 'base-sepolia', network: 'eip155:84532' });
  });

  it('a wrong amount is isValid false with a code x402 1.x lists in ErrorReasons', async () => {
    const v1 = useFacilitator({ url: facilitator.url as `${string}://${string}` });
    const { payload } = await v1Payment({ maxAmountRequired: '49999' });
    const { req } = await v1Payment();
    const res = await v1.verify(payload, req);
    expect(res).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_value', payer });
    expect(ErrorReasonsV1).toContain(res.invalidReason);
  });

  it('names only the v1 networks we serve', async () => {
    const { req, payload } = await v1Payment();
    const body = { x402Version: 1, paymentPayload: { ...payload, network: 'base' }, paymentRequirements: { ...req, network: 'base' } };
    const res = await stack.http.post('/x402/verify').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ isValid: false, invalidReason: 'invalid_network', invalidMessage: expect.stringContaining('base-sepolia') });
  });
});
