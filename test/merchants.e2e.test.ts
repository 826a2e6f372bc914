// Merchant identity without signup, end to end with the worker running: proof of control (an EOA and a
// real Safe 1.4.1 through ERC-1271), settle protection on every settle surface (including @x402/express
// with createAuthHeaders), and the merchant's own minimum.
import express from 'express';
import { getAddress, Wallet } from 'ethers';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { MerchantAction, merchantRequestDigest, signMerchantRequest } from '@facilitator/merchants';
import { balances, difference, newMerchant } from './support/chain-actions';
import { DEVNET_TREASURY, merchantCall, merchantProof } from './support/merchant-client';
import { createSafe, deploySafeContracts, safeEthSignSignature } from './support/safe';
import { LocalServers } from './support/local-servers';
import { startTestStack, type TestStack } from './support/test-stack';
import { setTimeout as sleep } from 'node:timers/promises';
import { x402V2Request } from './support/x402-request';

const FEE = 10_000n;
let stack: TestStack;
const servers = new LocalServers();


beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
});
afterAll(async () => {
  await servers.close();
  await stack?.stop();
});

async function settlementsOf(verificationId: string) {
  return stack.db.prisma.settlement.count({ where: { verificationId } });
}

async function waitForSettled(settlementId: string) {
  for (let i = 0; i < 200; i++) {
    const s = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: settlementId } });
    if (s.state === 'settled' || s.state === 'failed') return s;
    await sleep(50);
  }
  throw new Error(`settlement ${settlementId} did not finish`);
}

describe('proof of control', () => {
  it('a request is good at this deployment only: signed for another deployment (another treasury) it is refused; the published domain is accepted', async () => {
    const domain = await stack.http.get('/v1/merchants/request-domain');
    expect(domain.status).toBe(200);
    expect(domain.body).toEqual({
      network: 'eip155:84532',
      domain: { name: 'x402 Facilitator', version: '2', chainId: 84532, verifyingContract: getAddress(stack.config.treasuryAddress) },
      primary_type: 'MerchantRequest',
      types: { MerchantRequest: expect.any(Array) },
    });
    expect(getAddress(DEVNET_TREASURY)).toBe(getAddress(stack.config.treasuryAddress));
    const m = Wallet.createRandom();
    const path = `/v1/merchants/${m.address}/webhook-secret`;
    // the same merchant's signature of the same request, made for another deployment (another treasury)
    const elsewhere = await merchantProof(m, m.address, MerchantAction.GetWebhookSecret, {}, { treasury: Wallet.createRandom().address });
    const refused = await stack.http.post(path).send({ proof: elsewhere });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toContain(`not signed by ${m.address.toLowerCase()}`);
    // the deployment's own domain, as published, is accepted
    const here = await merchantProof(m, m.address, MerchantAction.GetWebhookSecret, {}, { treasury: domain.body.domain.verifyingContract });
    expect((await stack.http.post(path).send({ proof: here })).status).toBe(200);
  });

  it('a Safe merchant proves control through ERC-1271 (its owner signs for it), and a non-owner cannot', async () => {
    const deployer = Wallet.createRandom();
    await stack.devnet.setEthBalance(deployer.address, 10n ** 19n);
    const deployment = await deploySafeContracts(stack.devnet.provider, deployer.privateKey);
    const owner = Wallet.createRandom();
    const address = getAddress(await createSafe(deployment, owner.address, 1n));
    const safe = { address, owner, signDigest: (digest: string) => safeEthSignSignature(deployment, address, owner, digest) };
    const network = { caip2: 'eip155:84532', chainId: stack.devnet.chainId };
    const signAsSafe = (signDigest: (d: string) => Promise<string>) => async ({ message }: { message: Record<string, unknown> }) =>
      signDigest(
        merchantRequestDigest({
          action: message.action as MerchantAction,
          merchant: message.merchant as string,
          parameters: JSON.parse(message.parameters as string),
          nonce: message.nonce as string,
          expiresAt: Number(message.expiresAt),
          chainId: network.chainId,
          treasury: DEVNET_TREASURY,
        }),
      );
    const proof = await signMerchantRequest(undefined, { action: MerchantAction.GetWebhookSecret, merchant: safe.address, network, treasury: DEVNET_TREASURY, sign: signAsSafe(safe.signDigest) });
    // a Safe signature is not the owner's plain ECDSA signature of our digest: it goes through isValidSignature
    const res = await stack.http.post(`/v1/merchants/${safe.address}/webhook-secret`).send({ proof });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ merchant: safe.address.toLowerCase(), secret: expect.stringMatching(/^whsec_/) });

    // the owner's own EOA signature of the request is not the Safe's, nor is a stranger's Safe-style one
    const ownerProof = await signMerchantRequest(safe.owner, { action: MerchantAction.GetWebhookSecret, merchant: safe.address, network, treasury: DEVNET_TREASURY });
    expect((await stack.http.post(`/v1/merchants/${safe.address}/webhook-secret`).send({ proof: ownerProof })).status).toBe(401);
    const stranger = Wallet.createRandom();
    const strangerProof = await signMerchantRequest(undefined, {
      action: MerchantAction.GetWebhookSecret,
      merchant: safe.address,
      network,
      treasury: DEVNET_TREASURY,
      sign: signAsSafe((digest) => safeEthSignSignature(deployment, address, stranger, digest)),
    });
    expect((await stack.http.post(`/v1/merchants/${safe.address}/webhook-secret`).send({ proof: strangerProof })).status).toBe(401);
  });
});

describe('settle protection', () => {
  let m: Wallet;
  let key: string;
  beforeAll(async () => {
    m = await newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 1_000_000n });
    const res = await merchantCall(stack, m, MerchantAction.EnableSettleProtection);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ merchant: m.address.toLowerCase(), settle_key: expect.stringMatching(/^fsk_[A-Za-z0-9_-]{43}$/), settle_protection: true });
    key = res.body.settle_key;
    // stored hashed, never as given
    const row = await stack.db.pool.query('SELECT settle_key_hash FROM merchants WHERE address = $1', [m.address.toLowerCase()]);
    expect(row.rows[0].settle_key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row.rows)).not.toContain(key);
  });

  it('on: /v1/settle without the key (or with a wrong one) is 401 and nothing moves; with the key it settles', async () => {
    const p = await stack.payment({ to: m.address });
    const v = await stack.http.post('/v1/verify').send(p.formB({ seller_address: m.address }));
    expect(v.status).toBe(200); // verify stays open to all
    const before = await balances(stack.devnet, m.address);
    const body = { verification_id: v.body.verification_id, destination_address: m.address };
    const refused = await stack.http.post('/v1/settle').send(body);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ code: 'unauthorized', message: expect.stringContaining('settle protection is on') });
    expect((await stack.http.post('/v1/settle').set('Authorization', 'Bearer fsk_wrong').send(body)).status).toBe(401);
    // Form A too, on the same payment
    expect((await stack.http.post('/v1/settle').send(p.formA({ payTo: m.address }))).status).toBe(401);
    await sleep(300);
    expect(await settlementsOf(v.body.verification_id)).toBe(0);
    expect(difference(await balances(stack.devnet, m.address), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });

    const accepted = await stack.http.post('/v1/settle').set('Authorization', `Bearer ${key}`).send(body);
    expect(accepted.status).toBe(200);
    expect((await waitForSettled(accepted.body.settlement_id)).state).toBe('settled');
    expect(difference(await balances(stack.devnet, m.address), before)).toEqual({ payer: -10_000n, merchant: 10_000n - FEE, treasury: FEE });
  });

  it('on: /x402/settle without the key is 401 in the x402 shape, and nothing is enqueued', async () => {
    const p = await stack.payment({ to: m.address });
    const token = getAddress(stack.devnet.token);
    const body = x402V2Request(p.authorization, p.signature, { payTo: getAddress(m.address), amount: '10000', asset: token });
    const res = await stack.http.post('/x402/settle').send(body);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ success: false, errorReason: 'unauthorized', network: 'eip155:84532' });
    expect(await stack.db.prisma.settlement.count({ where: { nonce: p.authorization.nonce } })).toBe(0);
  });

  it('@x402/express configured with createAuthHeaders pays end to end', async () => {
    const facilitatorUrl = `${await servers.listen(stack.api.app)}/x402`;
    const token = getAddress(stack.devnet.token) as `0x${string}`;
    const auth = async () => {
      const headers = { Authorization: `Bearer ${key}` };
      return { verify: headers, settle: headers, supported: headers };
    };
    const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl, createAuthHeaders: auth })).register('eip155:84532', new ExactEvmServerScheme());
    const shop = express();
    shop.use(
      paymentMiddleware(
        { 'GET /paid': { accepts: { scheme: 'exact', network: 'eip155:84532', payTo: getAddress(m.address), price: { amount: '50000', asset: token, extra: { name: 'USDC', version: '2' } } } } },
        resourceServer,
      ),
    );
    shop.get('/paid', (_req, res) => res.json({ ok: true }));
    const shopUrl = await servers.listen(shop);
    const buyer = new x402Client()
      .register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(stack.devnet.accounts.payer.privateKey as `0x${string}`)))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: token, maxAmountPerPayment: '1000000' }] });
    const before = await balances(stack.devnet, m.address);
    const res = await wrapFetchWithPayment(fetch, buyer)(`${shopUrl}/paid`);
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: { ok: true } });
    expect(difference(await balances(stack.devnet, m.address), before)).toEqual({ payer: -50_000n, merchant: 50_000n - FEE, treasury: FEE });
  });

  it('turned off by another signed request: settles are open again and the old key reads nothing', async () => {
    const off = await merchantCall(stack, m, MerchantAction.DisableSettleProtection);
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ merchant: m.address.toLowerCase(), settle_protection: false, minimum: null });
    const p = await stack.payment({ to: m.address });
    const v = await stack.http.post('/v1/verify').send(p.formB({ seller_address: m.address }));
    const settled = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: m.address });
    expect(settled.status).toBe(200);
    expect((await stack.http.get('/v1/webhooks/deliveries').set('Authorization', `Bearer ${key}`).query({ verification_id: v.body.verification_id })).status).toBe(401);
    // strangers cannot turn it on for the merchant either
    const stranger = Wallet.createRandom();
    const { merchantProof } = await import('./support/merchant-client');
    const proof = await merchantProof(stranger as unknown as Wallet, m.address, MerchantAction.EnableSettleProtection);
    expect((await stack.http.post(`/v1/merchants/${m.address}/settle-key`).send({ proof })).status).toBe(401);
  });
});

describe("a merchant's own minimum", () => {
  it('below the fee is refused without settle protection; allowed with it; turning protection off restores the default', async () => {
    const m = await newMerchant(stack.devnet, { balance: 0n, allowance: 0n });
    const refused = await merchantCall(stack, m, MerchantAction.SetMinimum, { minimum: '0' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toMatchObject({ reason: 'settle_protection_required', fee: '10000' });
    // at or above the fee needs no protection
    expect((await merchantCall(stack, m, MerchantAction.SetMinimum, { minimum: '20000' })).body).toEqual({ merchant: m.address.toLowerCase(), settle_protection: false, minimum: '20000' });
    expect((await merchantCall(stack, m, MerchantAction.EnableSettleProtection)).status).toBe(200);
    expect((await merchantCall(stack, m, MerchantAction.SetMinimum, { minimum: '0' })).body).toEqual({ merchant: m.address.toLowerCase(), settle_protection: true, minimum: '0' });
    const { MerchantRepository } = await import('@facilitator/db');
    const { MerchantService, SecretBox } = await import('@facilitator/merchants');
    // another process's view (each reads a merchant's minimum at most once a second)
    const otherProcess = () => new MerchantService({ repository: new MerchantRepository(stack.db.pool), secretBox: new SecretBox('x'.repeat(32)), graceSeconds: 1, feeAmount: FEE });
    const service = otherProcess();
    expect(await service.minimumFor(m.address)).toBe(0n);
    expect(await service.minimumFor(Wallet.createRandom().address)).toBeUndefined();
    expect((await merchantCall(stack, m, MerchantAction.DisableSettleProtection)).body.minimum).toBeNull();
    expect(await otherProcess().minimumFor(m.address)).toBeUndefined();
    // the one that read it just before sees the change once its reading is a second old
    await new Promise((r) => setTimeout(r, 1_050));
    expect(await service.minimumFor(m.address)).toBeUndefined();
    // a signed minimum cannot be replayed with another value: the parameters are in the signature
    const { merchantProof } = await import('./support/merchant-client');
    const proof = await merchantProof(m, m.address, MerchantAction.SetMinimum, { minimum: '30000' });
    expect((await stack.http.post(`/v1/merchants/${m.address}/minimum`).send({ minimum: '40000', proof })).status).toBe(401);
  });

  it("with protection on and its minimum at 0, its own zero-value payment settles with its key while another merchant's stays refused", async () => {
    const [m, other] = await Promise.all([
      newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 1_000_000n }),
      newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 1_000_000n }),
    ]);
    const key = (await merchantCall(stack, m, MerchantAction.EnableSettleProtection)).body.settle_key as string;
    expect((await merchantCall(stack, m, MerchantAction.SetMinimum, { minimum: '0' })).status).toBe(200);

    const own = await stack.payment({ to: m.address, value: 0n });
    const v = await stack.http.post('/v1/verify').send(own.formB({ seller_address: m.address, expected_amount: '0' }));
    expect(v.status).toBe(200);
    const before = await balances(stack.devnet, m.address);
    const settle = { verification_id: v.body.verification_id, destination_address: m.address };
    expect((await stack.http.post('/v1/settle').send(settle)).status).toBe(401);
    const accepted = await stack.http.post('/v1/settle').set('Authorization', `Bearer ${key}`).send(settle);
    expect(accepted.status).toBe(200);
    expect((await waitForSettled(accepted.body.settlement_id)).state).toBe('settled');
    // the merchant chose to pay the fee for a payment worth nothing
    expect(difference(await balances(stack.devnet, m.address), before)).toEqual({ payer: 0n, merchant: -FEE, treasury: FEE });

    const theirs = await stack.payment({ to: other.address, value: 0n });
    const refused = await stack.http.post('/v1/verify').send(theirs.formB({ seller_address: other.address, expected_amount: '0' }));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'verification_failed', message: 'amount below minimum' });
  });
});
