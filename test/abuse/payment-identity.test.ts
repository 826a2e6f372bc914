// Attacks (identity 1-3): being reported paid to another merchant with a cheap payment that shares the
// dear one's (payer, nonce); reaching settle with another spelling of its path to skip settle protection;
// settling a verification stored while the merchant's minimum was lower. Real USDC on anvil, the compiled
// worker, the API in process.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Wallet } from 'ethers';
import { authorizationFingerprint } from '@facilitator/payment-mechanisms';
import { MerchantAction } from '@facilitator/merchants';
import { newMerchant, transfersOnChain } from '../support/chain-actions';
import { merchantCall } from '../support/merchant-client';
import { settlementEnd } from '../support/settlement-end';
import { startTestStack, type PaymentBodies, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { x402V2Request } from '../support/x402-request';

let stack: TestStack;

beforeAll(async () => {
  // no worker yet: the attacker's cheap settlement stays on its way while the victim is paid
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.stop();
});

const USDC = (units: number) => BigInt(Math.round(units * 1_000_000));

const x402Body = (p: PaymentBodies, payTo: string, amount: bigint) => x402V2Request(p.authorization, p.signature, { payTo, amount, asset: stack.devnet.token });

const waitForEnd = (settlementId: string) => settlementEnd(stack, settlementId);

/**
 * What two verifies of the two authorizations racing in one statement leave behind (neither sees the
 * other, so both are verified): the dear authorization's verified row, stored beside the cheap one's. The
 * settle intake is the check that cannot be raced; this puts the victim's verification where the race
 * would.
 */
async function raceVerified(cheapVerificationId: string, dear: PaymentBodies, victim: string): Promise<string> {
  const cheap = await stack.db.prisma.verification.findUniqueOrThrow({ where: { id: cheapVerificationId } });
  const a = dear.authorization;
  const id = `ver_${randomBytes(16).toString('hex')}`;
  await stack.db.prisma.verification.create({
    data: {
      ...cheap,
      id,
      request: { raced: true },
      metadata: undefined,
      failureDetails: undefined,
      merchant: victim.toLowerCase(),
      amount: a.value,
      expectedAmount: a.value,
      signature: dear.signature,
      // the dear authorization as the EIP-3009 mechanism stores it
      payload: { authorization: { ...a, from: a.from.toLowerCase(), to: a.to.toLowerCase(), nonce: a.nonce.toLowerCase() }, signature: dear.signature.toLowerCase() },
      authorizationFingerprint: authorizationFingerprint(84532, stack.devnet.token.toLowerCase(), {
        from: a.from.toLowerCase(), to: a.to.toLowerCase(), value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore), nonce: a.nonce.toLowerCase(),
      }),
    },
  });
  return id;
}

it('(identity 1) two authorizations with one nonce: the victim merchant is never told "settled" with the cheap payment\'s outcome', async () => {
  const report = abuseReport(
    'identity-1-same-nonce',
    'Reported paid to another merchant (same payer and nonce)',
    'a payer signs 0.01 USDC to its own shop and 100 USDC to a victim with the same nonce, settles the cheap one and pays the victim with the dear one, through /v1 (Form A, Form B) and /x402',
  );
  const attacker = Wallet.createRandom();
  await stack.devnet.mint(attacker.address, USDC(0.02));
  const shop = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const victim = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const fromBlock = await stack.devnet.provider.getBlockNumber();
  const victimBefore = await stack.devnet.balanceOf(victim.address);
  const answers: string[] = [];
  let toldSettled = 0;
  const note = <R extends { status: number; body: Record<string, unknown> & { error?: { code?: string } } }>(what: string, res: R): R => {
    const settled = res.status === 200 && (res.body.success === true || res.body.status === 'settled');
    if (settled) toldSettled++;
    answers.push(`${what}: ${res.status} ${res.body.error?.code ?? ''}${res.body.errorReason ?? ''}${res.body.invalidReason ?? ''}${settled ? ' SETTLED' : ''}`);
    return res;
  };

  // 1. the cheap one is verified and its settlement is on its way; the victim verifies the dear one after
  const nonce1 = `0x${randomBytes(32).toString('hex')}`;
  const cheap1 = await stack.payment({ payerKey: attacker.privateKey, to: shop.address, value: USDC(0.01), nonce: nonce1 });
  const dear1 = await stack.payment({ payerKey: attacker.privateKey, to: victim.address, value: USDC(100), nonce: nonce1 });
  const v1 = await stack.http.post('/v1/verify').send(cheap1.formB({ seller_address: shop.address }));
  expect(v1.status).toBe(200);
  const s1 = await stack.http.post('/v1/settle').send({ verification_id: v1.body.verification_id, destination_address: shop.address });
  expect(s1.body.status).toBe('pending');
  const victimVerify = note('victim /x402/verify of the dear payment', await stack.http.post('/x402/verify').send(x402Body(dear1, victim.address, USDC(100))));
  const victimVerifyV1 = note('victim /v1/verify (Form A)', await stack.http.post('/v1/verify').send(dear1.formA({ price: '$100', payTo: victim.address })));
  note('victim /x402/settle', await stack.http.post('/x402/settle').send(x402Body(dear1, victim.address, USDC(100))));
  note('victim /v1/settle (Form A)', await stack.http.post('/v1/settle').send(dear1.formA({ price: '$100', payTo: victim.address })));
  report.check('victim verify of the dear payment while the cheap one is being settled (x402)', 'isValid=false invalid_exact_evm_nonce_already_used', `isValid=${victimVerify.body.isValid} ${victimVerify.body.invalidReason}`);
  report.check('the same through /v1/verify', '400 verification_failed', `${victimVerifyV1.status} ${victimVerifyV1.body.error?.code}`);

  // 2. both verified (as a race of the two verifies leaves them): the settle intake refuses the dear one
  const nonce2 = `0x${randomBytes(32).toString('hex')}`;
  const cheap2 = await stack.payment({ payerKey: attacker.privateKey, to: shop.address, value: USDC(0.01), nonce: nonce2 });
  const dear2 = await stack.payment({ payerKey: attacker.privateKey, to: victim.address, value: USDC(100), nonce: nonce2 });
  const v2 = await stack.http.post('/v1/verify').send(cheap2.formB({ seller_address: shop.address }));
  expect(v2.status).toBe(200);
  const s2 = await stack.http.post('/v1/settle').send({ verification_id: v2.body.verification_id, destination_address: shop.address });
  expect(s2.body.status).toBe('pending');
  const dearVerification = await raceVerified(v2.body.verification_id, dear2, victim.address);
  const settleDear = async (when: string) => [
    note(`${when}: victim /v1/settle (Form A)`, await stack.http.post('/v1/settle').send(dear2.formA({ price: '$100', payTo: victim.address }))),
    note(`${when}: victim /v1/settle (Form B)`, await stack.http.post('/v1/settle').send({ verification_id: dearVerification, destination_address: victim.address })),
    note(`${when}: victim /x402/settle`, await stack.http.post('/x402/settle').send(x402Body(dear2, victim.address, USDC(100)))),
  ];
  const inFlight = await settleDear('cheap one in flight');
  report.check('victim settles while the cheap one is in flight: /v1 Form A, Form B, /x402', '409 payment_conflict, 409 payment_conflict, success=false invalid_exact_evm_nonce_already_used',
    `${inFlight[0].status} ${inFlight[0].body.error?.code}, ${inFlight[1].status} ${inFlight[1].body.error?.code}, success=${inFlight[2].body.success} ${inFlight[2].body.errorReason}`);

  // the cheap payments settle; asked again later, the victim's answers stay refusals
  await stack.startWorker();
  const [end1, end2] = await Promise.all([waitForEnd(s1.body.settlement_id), waitForEnd(s2.body.settlement_id)]);
  report.check('the cheap payments settled (the attacker paid its own shop)', 'settled, settled', `${end1.state}, ${end2.state}`);
  const later = await settleDear('cheap one settled');
  report.check('victim settles after the cheap one settled: /v1 Form A, Form B, /x402', '409, 409, success=false',
    `${later[0].status}, ${later[1].status}, success=${later[2].body.success}`);

  report.check('answers that told the victim "settled"', 0, toldSettled);
  report.check('victim merchant balance change', '0', String((await stack.devnet.balanceOf(victim.address)) - victimBefore));
  report.check('payments from the attacker to the victim on chain', 0, await transfersOnChain(stack.devnet, fromBlock, attacker.address, victim.address));
  report.check("settlements of the victim's authorizations", 0, await stack.db.prisma.settlement.count({ where: { merchant: victim.address.toLowerCase() } }));
  report.note(`answers: ${answers.join('; ')}`);
  report.save();
  expect(toldSettled).toBe(0);
  expect(victimVerify.body).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used' });
  expect(victimVerifyV1.status).toBe(400);
  expect(inFlight.map((r) => r.status)).toEqual([409, 409, 200]);
  expect(inFlight[0].body.error.code).toBe('payment_conflict');
  expect(inFlight[2].body).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_nonce_already_used' });
  expect([end1.state, end2.state]).toEqual(['settled', 'settled']);
  expect(later.map((r) => r.status)).toEqual([409, 409, 200]);
  expect(later[2].body.success).toBe(false);
  expect((await stack.devnet.balanceOf(victim.address)) - victimBefore).toBe(0n);
}, 120_000);

it('(identity 2) another spelling of a settle path (case, trailing or doubled slashes) reaches no handler: settle protection cannot be skipped', async () => {
  const report = abuseReport(
    'identity-2-path-spelling',
    'Settle protection skipped with another spelling of the path',
    'zero-value payments to a merchant with settle protection on and its own minimum at 0, settled without its key at /X402/settle, /x402/Settle, /x402/settle/, /V1/settle, /v1/settle/, //x402/settle, /x402//settle',
  );
  const merchant = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  expect((await merchantCall(stack, merchant, MerchantAction.EnableSettleProtection)).status).toBe(200);
  expect((await merchantCall(stack, merchant, MerchantAction.SetMinimum, { minimum: '0' })).status).toBe(200);
  const allowanceBefore = await stack.devnet.allowance(merchant.address, stack.devnet.accounts.treasury.address);
  const attacker = Wallet.createRandom();
  const spellings = ['/X402/settle', '/x402/Settle', '/X402/SETTLE', '/x402/settle/', '//x402/settle', '/x402//settle', '/V1/settle', '/v1/Settle', '/v1/settle/'];
  const statuses: string[] = [];
  for (const path of spellings) {
    const p = await stack.payment({ payerKey: attacker.privateKey, to: merchant.address, value: 0n });
    const verified = await stack.http.post('/v1/verify').send(p.formB({ seller_address: merchant.address, expected_amount: '0' }));
    expect(verified.status).toBe(200);
    const body = path.toLowerCase().includes('x402')
      ? x402Body(p, merchant.address, 0n)
      : p.formA({ price: undefined, amount: '0', payTo: merchant.address });
    const res = await stack.http.post(path).send(body);
    statuses.push(`${path} ${res.status}`);
  }
  const exact = await stack.payment({ payerKey: attacker.privateKey, to: merchant.address, value: 0n });
  const withoutKey = await stack.http.post('/x402/settle').send(x402Body(exact, merchant.address, 0n));
  await sleep(500); // a settlement made by mistake would have been taken by the running worker by now
  const created = await stack.db.prisma.settlement.count({ where: { merchant: merchant.address.toLowerCase() } });
  const allowanceAfter = await stack.devnet.allowance(merchant.address, stack.devnet.accounts.treasury.address);
  report.check('answers to the other spellings', spellings.map((p) => `${p} 404`).join(', '), statuses.join(', '));
  report.check('the exact path without the settle key', '401 unauthorized', `${withoutKey.status} ${withoutKey.body.errorReason}`);
  report.check('settlements created for the merchant', 0, created);
  report.check('merchant allowance change', '0', String(allowanceAfter - allowanceBefore));
  report.save();
  expect(statuses).toEqual(spellings.map((p) => `${p} 404`));
  expect(withoutKey.status).toBe(401);
  expect(created).toBe(0);
  expect(allowanceAfter).toBe(allowanceBefore);
}, 60_000);

it("(identity 3) a verification stored while the merchant's minimum was 0 cannot be settled once its protection (and minimum) is revoked", async () => {
  const report = abuseReport(
    'identity-3-minimum-revoked',
    'Settling under a minimum that no longer holds',
    'zero-value payments verified while a merchant had settle protection and its minimum at 0, settled after it revoked protection, through /v1 (Form A, Form B) and /x402',
  );
  const merchant = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  expect((await merchantCall(stack, merchant, MerchantAction.EnableSettleProtection)).status).toBe(200);
  expect((await merchantCall(stack, merchant, MerchantAction.SetMinimum, { minimum: '0' })).status).toBe(200);
  const attacker = Wallet.createRandom();
  const p = await stack.payment({ payerKey: attacker.privateKey, to: merchant.address, value: 0n });
  const verified = await stack.http.post('/v1/verify').send(p.formA({ price: undefined, amount: '0', payTo: merchant.address }));
  expect(verified.status).toBe(200);
  expect((await merchantCall(stack, merchant, MerchantAction.DisableSettleProtection)).status).toBe(200);
  const allowanceBefore = await stack.devnet.allowance(merchant.address, stack.devnet.accounts.treasury.address);

  const formA = await stack.http.post('/v1/settle').send(p.formA({ price: undefined, amount: '0', payTo: merchant.address }));
  const formB = await stack.http.post('/v1/settle').send({ verification_id: verified.body.details.verification_id, destination_address: merchant.address });
  const x402 = await stack.http.post('/x402/settle').send(x402Body(p, merchant.address, 0n));
  await sleep(500);
  const created = await stack.db.prisma.settlement.count({ where: { merchant: merchant.address.toLowerCase() } });
  const allowanceAfter = await stack.devnet.allowance(merchant.address, stack.devnet.accounts.treasury.address);
  report.check('/v1 Form A, Form B', '400 amount below minimum, 400 amount below minimum', `${formA.status} ${formA.body.error?.message}, ${formB.status} ${formB.body.error?.message}`);
  report.check('/x402/settle', 'success=false invalid_exact_evm_payload_authorization_value', `success=${x402.body.success} ${x402.body.errorReason}`);
  report.check('settlements created', 0, created);
  report.check('merchant allowance change', '0', String(allowanceAfter - allowanceBefore));
  report.save();
  expect([formA.status, formB.status]).toEqual([400, 400]);
  expect(formA.body.error.message).toBe('amount below minimum');
  expect(x402.body).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_payload_authorization_value' });
  expect(created).toBe(0);
  expect(allowanceAfter).toBe(allowanceBefore);
}, 60_000);
