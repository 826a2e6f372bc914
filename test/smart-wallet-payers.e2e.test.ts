// Smart-wallet payers (issue 15): real Safe 1.4.1 contracts at their canonical addresses. A Safe that
// does not exist yet pays with an ERC-6492 signature (verification simulates its deployment; settlement
// deploys it through the allowlisted factory before the fee), through /v1 and /x402; a deployed Safe pays
// by ERC-1271; a 6492 signature the wallet would refuse is refused with nothing deployed or moved; and
// the wallet-deployment gas cap applies.
import { randomBytes } from 'node:crypto';
import { hexlify, Wallet } from 'ethers';
import type { TransferAuthorization } from '@facilitator/core';
import { startTestStack, PRICE_UNITS, type TestStack } from './support/test-stack';
import {
  authorizationDigest,
  CANONICAL_SAFE,
  counterfactualSafe,
  counterfactualSafeSignature,
  deployCounterfactualSafe,
  placeCanonicalSafe,
  safeOwnerSignature,
  type CounterfactualSafe,
} from './support/canonical-safe';
import { setTimeout as sleep } from 'node:timers/promises';
import { x402V2Request } from './support/x402-request';
import { authorizationFrom, formBVerifyRequest } from './support/contract-payer-requests';

let stack: TestStack;

beforeAll(async () => {
  // these Safe payers settle on the sequential path, which refuses contract-wallet payers unless allowed
  stack = await startTestStack({ env: { SEQUENTIAL_CONTRACT_PAYERS: 'allow' } });
  await placeCanonicalSafe(stack.devnet.provider);
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});

/** A Safe of a fresh owner, counterfactual (not deployed), holding 1 USDC. */
async function fundedCounterfactualSafe(): Promise<{ owner: Wallet; safe: CounterfactualSafe }> {
  const owner = Wallet.createRandom();
  const safe = await counterfactualSafe(stack.devnet.provider, owner.address, BigInt(hexlify(randomBytes(8))));
  await stack.devnet.mint(safe.address, 1_000_000n);
  return { owner: new Wallet(owner.privateKey), safe };
}

async function signAsSafe(owner: Wallet, safe: string, authorization: TransferAuthorization): Promise<string> {
  return safeOwnerSignature(owner, stack.devnet.chainId, safe, authorizationDigest(stack.devnet.eip712Domain, authorization));
}

async function settleV1(verificationId: string): Promise<{ status: string; state: string; id: string }> {
  const s = await stack.http.post('/v1/settle').send({ verification_id: verificationId, destination_address: stack.devnet.accounts.merchant.address });
  let record = (await stack.http.get(`/v1/settlements/${s.body.settlement_id}`)).body;
  for (let i = 0; i < 300 && record.status === 'pending'; i++) {
    await sleep(50);
    record = (await stack.http.get(`/v1/settlements/${s.body.settlement_id}`)).body;
  }
  return { status: record.status, state: record.state, id: s.body.settlement_id };
}

async function history(settlementId: string): Promise<string[]> {
  const rows = await stack.db.prisma.settlementTransition.findMany({ where: { settlementId }, orderBy: { id: 'asc' } });
  return rows.map((r) => r.toState);
}

const code = (address: string) => stack.devnet.provider.getCode(address);

it('places Safe 1.4.1 at its canonical addresses', async () => {
  for (const address of Object.values(CANONICAL_SAFE)) expect((await code(address)).length).toBeGreaterThan(1000);
});

it('a counterfactual Safe pays through /v1: verified without deploying, deployed by settlement before the fee, paid once', async () => {
  const { owner, safe } = await fundedCounterfactualSafe();
  const authorization = authorizationFrom(stack.devnet, safe.address);
  const signature = counterfactualSafeSignature(safe, await signAsSafe(owner, safe.address, authorization));

  const verified = await stack.http.post('/v1/verify').send(formBVerifyRequest(stack.devnet, authorization, signature));
  expect(verified.body.status).toBe('verified');
  expect(await code(safe.address)).toBe('0x');

  const merchantBefore = await stack.devnet.balanceOf(stack.devnet.accounts.merchant.address);
  const settled = await settleV1(verified.body.verification_id);
  expect(settled.status).toBe('settled');
  expect(await code(safe.address)).not.toBe('0x');
  expect(await stack.devnet.balanceOf(safe.address)).toBe(1_000_000n - PRICE_UNITS);
  expect((await stack.devnet.balanceOf(stack.devnet.accounts.merchant.address)) - merchantBefore).toBe(PRICE_UNITS - stack.config.feeAmount);
  expect(await history(settled.id)).toEqual(['pending', 'deploying_wallet', 'check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);
});

it('a counterfactual Safe pays through /x402', async () => {
  const { owner, safe } = await fundedCounterfactualSafe();
  const authorization = authorizationFrom(stack.devnet, safe.address);
  const signature = counterfactualSafeSignature(safe, await signAsSafe(owner, safe.address, authorization));
  const body = x402V2Request(authorization, signature, {
    payTo: stack.devnet.accounts.merchant.address, amount: PRICE_UNITS, asset: stack.devnet.token, maxTimeoutSeconds: 300, resource: 'http://merchant.test/weather',
  });
  const verified = await stack.http.post('/x402/verify').send(body);
  expect(verified.body).toMatchObject({ isValid: true });
  expect(await code(safe.address)).toBe('0x');
  const settled = await stack.http.post('/x402/settle').send(body);
  expect(settled.body).toMatchObject({ success: true, network: 'eip155:84532' });
  expect(await code(safe.address)).not.toBe('0x');
  expect(await stack.devnet.balanceOf(safe.address)).toBe(1_000_000n - PRICE_UNITS);
});

it('a deployed Safe pays by ERC-1271', async () => {
  const { owner, safe } = await fundedCounterfactualSafe();
  await deployCounterfactualSafe(new Wallet(stack.devnet.accounts.merchant.privateKey, stack.devnet.provider), safe);
  const authorization = authorizationFrom(stack.devnet, safe.address);
  const verified = await stack.http.post('/v1/verify').send(formBVerifyRequest(stack.devnet, authorization, await signAsSafe(owner, safe.address, authorization)));
  expect(verified.body.status).toBe('verified');
  const settled = await settleV1(verified.body.verification_id);
  expect(settled.status).toBe('settled');
  expect(await history(settled.id)).toEqual(['pending', 'check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);
  expect(await stack.devnet.balanceOf(safe.address)).toBe(1_000_000n - PRICE_UNITS);
});

it('refuses a 6492 signature the deployed wallet would reject: nothing deployed, nothing moved', async () => {
  const { safe } = await fundedCounterfactualSafe();
  const stranger = Wallet.createRandom();
  const authorization = authorizationFrom(stack.devnet, safe.address);
  const signature = counterfactualSafeSignature(safe, await signAsSafe(new Wallet(stranger.privateKey), safe.address, authorization));
  const merchantBefore = await stack.devnet.balanceOf(stack.devnet.accounts.merchant.address);

  const verified = await stack.http.post('/v1/verify').send(formBVerifyRequest(stack.devnet, authorization, signature));
  expect(verified.status).toBe(400);
  expect(verified.body.error).toMatchObject({ code: 'verification_failed', details: { reason: 'the payer wallet (ERC-6492, once deployed) rejected the signature' } });
  expect(await code(safe.address)).toBe('0x');
  expect(await stack.devnet.balanceOf(safe.address)).toBe(1_000_000n);
  expect(await stack.devnet.balanceOf(stack.devnet.accounts.merchant.address)).toBe(merchantBefore);
});

it('refuses a 6492 signature whose factory is not on the allowlist', async () => {
  const { owner, safe } = await fundedCounterfactualSafe();
  const authorization = authorizationFrom(stack.devnet, safe.address);
  const inner = await signAsSafe(owner, safe.address, authorization);
  const { wrapErc6492Signature } = await import('@facilitator/evm-chain');
  const signature = wrapErc6492Signature('0x000000000000000000000000000000000000dead', safe.factoryCalldata, inner);
  const verified = await stack.http.post('/v1/verify').send(formBVerifyRequest(stack.devnet, authorization, signature));
  expect(verified.status).toBe(400);
  expect(verified.body.error.details.reason).toContain("factory 0x000000000000000000000000000000000000dead is not on this network's allowlist");
});

it('applies the wallet-deployment gas cap before anything is sent or charged', async () => {
  await stack.killWorkers();
  await stack.startWorker({ GAS_CAP_WALLET_DEPLOY_84532: '100000' });
  const { owner, safe } = await fundedCounterfactualSafe();
  const authorization = authorizationFrom(stack.devnet, safe.address);
  const signature = counterfactualSafeSignature(safe, await signAsSafe(owner, safe.address, authorization));
  const verified = await stack.http.post('/v1/verify').send(formBVerifyRequest(stack.devnet, authorization, signature));
  expect(verified.body.status).toBe('verified');
  const merchantBefore = await stack.devnet.balanceOf(stack.devnet.accounts.merchant.address);
  const settled = await settleV1(verified.body.verification_id);
  expect(settled.status).toBe('failed');
  const record = (await stack.http.get(`/v1/settlements/${settled.id}`)).body;
  expect(record.error.details).toMatchObject({ reason: 'wallet deployment gas estimate is above its cap', gas_cap: '100000' });
  expect(await code(safe.address)).toBe('0x');
  expect(await stack.devnet.balanceOf(safe.address)).toBe(1_000_000n);
  expect(await stack.devnet.balanceOf(stack.devnet.accounts.merchant.address)).toBe(merchantBefore);
});
