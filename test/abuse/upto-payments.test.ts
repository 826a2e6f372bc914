// Attacks (upto 1-9): the abuse suite's attacks against `upto` through Permit2, where the payer signs a maximum
// and the merchant names at settle what moves — zero-value payments and settles of 0, one Permit2 nonce signed
// to two merchants, a gas-burning contract wallet, a settle above the maximum (and a claimed maximum above the
// signed one), a payment naming another facilitator, one payment settled again and again for other amounts,
// the payer settling its own payload for a token amount before the merchant, a loop of settlements below the
// fee (which pay none), and a payment settled for 0 then again for more. Real USDC, Permit2 and the upto
// proxy's double on anvil, the compiled worker, the API in process.
import { setTimeout as sleep } from 'node:timers/promises';
import { Wallet } from 'ethers';
import { MerchantAction } from '@facilitator/merchants';
import { newMerchant, sentByUs, transfersOnChain } from '../support/chain-actions';
import { merchantCall } from '../support/merchant-client';
import { approvePermit2, uptoRequest } from '../support/permit2-request';
import { settlementEnd } from '../support/settlement-end';
import { startTestStack, type TestStack } from '../support/test-stack';
import { compileTestContract, deploy } from '../support/solidity';
import { abuseReport } from './abuse-report';

const USDC = (units: number) => BigInt(Math.round(units * 1_000_000));
let stack: TestStack;

/** a budget small enough to reach: settlements charged no fee, per merchant and hour (upto 8) */
const FEE_FREE_PER_MERCHANT = 3;

beforeAll(async () => {
  stack = await startTestStack({ env: { FEE_FREE_SETTLEMENTS_PER_MERCHANT_PER_HOUR: String(FEE_FREE_PER_MERCHANT) } });
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});

/** a payer holding `balance` that approved Permit2 */
async function payerWith(balance: bigint) {
  const payer = Wallet.createRandom();
  await stack.devnet.mint(payer.address, balance);
  await approvePermit2(stack.devnet, payer.privateKey);
  return payer;
}
/** a merchant that turned settle protection on, and its settle key: it alone names less than a maximum */
async function protectedMerchant() {
  const wallet = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const key = (await merchantCall(stack, wallet, MerchantAction.EnableSettleProtection)).body.settle_key as string;
  return { wallet, key };
}
const tally = (answers: Array<{ status: number; body: Record<string, unknown> }>) => {
  const counts: Record<string, number> = {};
  for (const a of answers) {
    const key = `${a.status} ${a.body.isValid ?? a.body.success} ${a.body.invalidReason ?? a.body.errorReason ?? ''}`.trim();
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return Object.entries(counts).map(([k, v]) => `${v} × ${k}`).join('; ');
};

it('(upto 1) zero-value upto payments and settles of 0: nothing moves, nothing is charged, sent or stored as a settlement', async () => {
  const report = abuseReport(
    'upto-1-zero-value',
    'Zero-value upto payments and settles of 0',
    '20 upto payments with a maximum of 0 from a throwaway key (verify and settle), then 10 real payments (maximum 0.05 USDC) settled for 0 by a stranger (no settle key: a 0 is the payment\'s final outcome, which only its merchant names)',
  );
  const merchant = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const attacker = await payerWith(USDC(1));
  const [merchantBefore, payerBefore, sentBefore] = await Promise.all([stack.devnet.balanceOf(merchant.address), stack.devnet.balanceOf(attacker.address), sentByUs(stack.devnet)]);
  const zero = await Promise.all(Array.from({ length: 20 }, () => uptoRequest(stack.devnet, { payerKey: attacker.privateKey, to: merchant.address, value: 0n })));
  const zeroAnswers = await Promise.all(zero.map((b, i) => stack.http.post(i % 2 === 0 ? '/x402/verify' : '/x402/settle').send(b)));
  const nothing = await Promise.all(Array.from({ length: 10 }, () => uptoRequest(stack.devnet, { payerKey: attacker.privateKey, to: merchant.address, value: USDC(0.05) }, 0n)));
  const nothingAnswers = await Promise.all(nothing.map((b) => stack.http.post('/x402/settle').send(b)));
  await sleep(1000); // anything enqueued would have been sent by now
  report.note(`zero maximum: ${tally(zeroAnswers)}; settled for 0: ${tally(nothingAnswers)}`);
  const ok = [
    report.check('zero maximum refused (the minimum), verify and settle', '20', String(zeroAnswers.filter((a) => a.body.isValid === false || a.body.success === false).length)),
    report.check("settles of 0 without the merchant's settle key answered 401 unauthorized", '10', String(nothingAnswers.filter((a) => a.status === 401 && a.body.errorReason === 'unauthorized').length)),
    report.check('merchant balance change', '0', String((await stack.devnet.balanceOf(merchant.address)) - merchantBefore)),
    report.check('payer balance change', '0', String((await stack.devnet.balanceOf(attacker.address)) - payerBefore)),
    report.check('transactions sent by the treasury and relayers', 0, (await sentByUs(stack.devnet)) - sentBefore),
    report.check('settlements created', 0, await stack.db.prisma.settlement.count({ where: { merchant: merchant.address.toLowerCase() } })),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(upto 2) one Permit2 nonce signed as upto to two merchants: the victim is never told "settled" with the cheap payment\'s outcome', async () => {
  const report = abuseReport(
    'upto-2-same-nonce',
    'Reported paid to another merchant (same Permit2 nonce, upto)',
    "a payer signs an upto maximum of 0.02 USDC to its own shop and 100 USDC to a victim with one Permit2 nonce, settles the cheap one, then verifies and settles the dear one at the victim's",
  );
  const attacker = await payerWith(USDC(0.02));
  const shop = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const victim = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const nonce = BigInt(Date.now()).toString();
  const cheap = await uptoRequest(stack.devnet, { payerKey: attacker.privateKey, to: shop.address, value: USDC(0.02), nonce });
  const dear = await uptoRequest(stack.devnet, { payerKey: attacker.privateKey, to: victim.address, value: USDC(100), nonce });
  const victimBefore = await stack.devnet.balanceOf(victim.address);
  const cheapSettle = await stack.http.post('/x402/settle').send(cheap);
  await settlementEnd(stack, cheapSettle.headers['x-settlement-id']);
  const [dearVerify, dearSettle] = [await stack.http.post('/x402/verify').send(dear), await stack.http.post('/x402/settle').send(dear)];
  await sleep(500);
  report.note(`cheap: ${tally([cheapSettle])}; dear: verify ${tally([dearVerify])}, settle ${tally([dearSettle])}`);
  const ok = [
    report.check('the cheap payment settled', 'true', String(cheapSettle.body.success)),
    report.check('victim: verify answer', 'false permit2_invalid_nonce', `${dearVerify.body.isValid} ${dearVerify.body.invalidReason}`),
    report.check('victim: settle answers "settled"', 'false', String(dearSettle.body.success)),
    report.check("victim's settled settlements", 0, await stack.db.prisma.settlement.count({ where: { merchant: victim.address.toLowerCase(), state: 'settled' } })),
    report.check('victim balance change', '0', String((await stack.devnet.balanceOf(victim.address)) - victimBefore)),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(upto 3) a contract-wallet payer whose ERC-1271 check burns gas, paying upto: refused, nothing sent', async () => {
  const report = abuseReport(
    'upto-3-gas-burning-wallet',
    'A gas-burning contract wallet paying upto through Permit2',
    'a contract wallet whose isValidSignature loops (~1e9 gas) verifies and settles an upto payment',
  );
  const { provider, accounts } = stack.devnet;
  const burner = (await (await deploy(provider, accounts.deployer.privateKey, compileTestContract('GasBurningWallet.sol', 'GasBurningWallet'), [10_000_000])).getAddress()).toLowerCase();
  const sentBefore = await sentByUs(stack.devnet);
  const body = await uptoRequest(stack.devnet, { payerKey: Wallet.createRandom().privateKey, from: burner, signature: '0x' + 'ab'.repeat(65), to: accounts.merchant.address, value: USDC(0.05) });
  const started = performance.now();
  const [verify, settle] = await Promise.all([stack.http.post('/x402/verify').send(body), stack.http.post('/x402/settle').send(body)]);
  const ms = Math.round(performance.now() - started);
  await sleep(1000);
  const ok = [
    report.check('verify answer', 'false invalid_permit2_signature', `${verify.body.isValid} ${verify.body.invalidReason}`),
    report.check('settle answer', 'false invalid_permit2_signature', `${settle.body.success} ${settle.body.errorReason}`),
    report.check("settlements of the burner's payment", 0, await stack.db.prisma.settlement.count({ where: { payer: burner } })),
    report.check('transactions sent by the treasury and relayers', 0, (await sentByUs(stack.devnet)) - sentBefore),
  ];
  report.note(`both answered in ${ms} ms; refused as: ${verify.body.invalidMessage}`);
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(upto 4) a settle above the signed maximum, and a claimed maximum above the signed one: refused, nothing moves', async () => {
  const report = abuseReport(
    'upto-4-above-maximum',
    'Settling more than the payer signed (upto)',
    'a merchant settles 0.05 USDC + 1 unit of a payment whose maximum is 0.05 USDC; another claims (accepted.amount) a maximum of 1 USDC for a permit of 0.05 USDC and settles 1 USDC',
  );
  const payer = await payerWith(USDC(2));
  const merchant = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const [payerBefore, sentBefore] = await Promise.all([stack.devnet.balanceOf(payer.address), sentByUs(stack.devnet)]);
  const above = await stack.http.post('/x402/settle').send(await uptoRequest(stack.devnet, { payerKey: payer.privateKey, to: merchant.address, value: USDC(0.05) }, USDC(0.05) + 1n));
  const claimed = await uptoRequest(stack.devnet, { payerKey: payer.privateKey, to: merchant.address, value: USDC(0.05) }, USDC(1));
  claimed.paymentPayload.accepted.amount = USDC(1).toString();
  const inflated = await stack.http.post('/x402/settle').send(claimed);
  await sleep(1000);
  report.note(`above the maximum: ${tally([above])}; inflated maximum: ${tally([inflated])}`);
  const ok = [
    report.check('settle above the maximum', '400 false invalid_upto_evm_payload_settlement_exceeds_amount', `${above.status} ${above.body.success} ${above.body.errorReason}`),
    report.check('settle with an inflated maximum', 'false permit2_amount_mismatch', `${inflated.body.success} ${inflated.body.errorReason}`),
    report.check('payer balance change', '0', String((await stack.devnet.balanceOf(payer.address)) - payerBefore)),
    report.check('transactions sent by the treasury and relayers', 0, (await sentByUs(stack.devnet)) - sentBefore),
    report.check('settlements created', 0, await stack.db.prisma.settlement.count({ where: { merchant: merchant.address.toLowerCase() } })),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(upto 5) a payment whose witness names another facilitator: refused at verify and settle, nothing charged or sent', async () => {
  const report = abuseReport(
    'upto-5-other-facilitator',
    'An upto payment for another facilitator',
    "an upto payment whose witness names a relayer of ours (not the treasury we advertise) and one naming a stranger's address, each verified and settled: the proxy would revert any call of ours after the fee",
  );
  const payer = await payerWith(USDC(1));
  const merchant = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const [merchantBefore, sentBefore] = await Promise.all([stack.devnet.balanceOf(merchant.address), sentByUs(stack.devnet)]);
  const others = [stack.devnet.accounts.relayers[0].address, Wallet.createRandom().address];
  const answers = [];
  for (const facilitator of others) {
    const body = await uptoRequest(stack.devnet, { payerKey: payer.privateKey, to: merchant.address, value: USDC(0.05), facilitator });
    answers.push(await stack.http.post('/x402/verify').send(body), await stack.http.post('/x402/settle').send(body));
  }
  await sleep(1000);
  report.note(`answers: ${tally(answers)}`);
  const ok = [
    report.check('answers upto_facilitator_mismatch (verify, settle, for each)', '4', String(answers.filter((a) => (a.body.invalidReason ?? a.body.errorReason) === 'upto_facilitator_mismatch').length)),
    report.check('merchant balance change', '0', String((await stack.devnet.balanceOf(merchant.address)) - merchantBefore)),
    report.check('transactions sent by the treasury and relayers', 0, (await sentByUs(stack.devnet)) - sentBefore),
    report.check('settlements created', 0, await stack.db.prisma.settlement.count({ where: { merchant: merchant.address.toLowerCase() } })),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(upto 6) one payment settled 5 times at once for 5 amounts, then again for more once settled: one amount moves, once', async () => {
  const report = abuseReport(
    'upto-6-many-amounts',
    'One upto payment settled for many amounts',
    'a merchant (or whoever holds the payload) settles one payment of maximum 0.1 USDC for 0.02, 0.04, 0.06, 0.08 and 0.1 USDC at the same instant, then again after it settled for another amount (0.1 USDC, or 0.08 when 0.1 won)',
  );
  const payer = await payerWith(USDC(1));
  const { wallet: merchant, key } = await protectedMerchant();
  const { treasury } = stack.devnet.accounts;
  const fromBlock = await stack.devnet.provider.getBlockNumber();
  const payerBefore = await stack.devnet.balanceOf(payer.address);
  const signed = await uptoRequest(stack.devnet, { payerKey: payer.privateKey, to: merchant.address, value: USDC(0.1) });
  const withAmount = (amount: bigint) => ({ ...signed, paymentRequirements: { ...signed.paymentRequirements, amount: amount.toString() } });
  const amounts = [0.02, 0.04, 0.06, 0.08, 0.1].map(USDC);
  const settle = (amount: bigint) => stack.http.post('/x402/settle').set('Authorization', `Bearer ${key}`).send(withAmount(amount));
  const answers = await Promise.all(amounts.map(settle));
  const settlements = await stack.db.prisma.settlement.findMany({ where: { merchant: merchant.address.toLowerCase() } });
  const ends = await Promise.all(settlements.map((s) => settlementEnd(stack, s.id)));
  // another amount than the one that won the race (0.1 USDC unless that won: then settling 0.1 again is the
  // same settlement, answered as it ended, and the other amount is the attack)
  const otherAmount = ends[0]?.amount === USDC(0.1).toString() ? USDC(0.08) : USDC(0.1);
  const again = await settle(otherAmount);
  await sleep(1000);
  const paid = (await stack.devnet.balanceOf(payer.address)) - payerBefore;
  report.note(`answers: ${tally(answers)}; again after it settled: ${tally([again])}; settled ${ends.map((e) => e.amount).join(', ')}`);
  const ok = [
    report.check('settlements created', 1, ends.length),
    report.check('the payer paid what that settlement says', `-${ends[0]?.amount}`, paid.toString()),
    report.check('payments on chain', 1, await transfersOnChain(stack.devnet, fromBlock + 1, payer.address, merchant.address)),
    report.check('fee transfers on chain', 1, await transfersOnChain(stack.devnet, fromBlock + 1, merchant.address, treasury.address)),
    report.check('answers "settled" with an amount other than the one that moved', 0, [...answers, again].filter((a) => a.body.success === true && a.body.amount !== ends[0]?.amount).length),
    report.check('settling it again for another amount, once settled', 'false permit2_invalid_nonce', `${again.body.success} ${again.body.errorReason}`),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it("(upto 7) the payer settles its own payload for 1 unit before the merchant settles what was used: refused, the merchant's settle moves its amount", async () => {
  const report = abuseReport(
    'upto-7-payer-names-the-amount',
    'Whoever holds an upto payload naming the amount',
    "a payer signs an upto maximum of 0.05 USDC to a merchant, and while the merchant serves it posts the same payload to /x402/settle for 1 unit (and for 0.01 USDC, the fee), with no key and with a wrong one; then the merchant settles 0.03 USDC with its settle key",
  );
  const payer = await payerWith(USDC(1));
  const { wallet: merchant, key } = await protectedMerchant();
  const { treasury } = stack.devnet.accounts;
  const fromBlock = await stack.devnet.provider.getBlockNumber();
  const payerBefore = await stack.devnet.balanceOf(payer.address);
  const signed = await uptoRequest(stack.devnet, { payerKey: payer.privateKey, to: merchant.address, value: USDC(0.05) });
  const withAmount = (amount: bigint) => ({ ...signed, paymentRequirements: { ...signed.paymentRequirements, amount: amount.toString() } });
  const attempts = [
    await stack.http.post('/x402/settle').send(withAmount(1n)),
    await stack.http.post('/x402/settle').send(withAmount(USDC(0.01))),
    await stack.http.post('/x402/settle').set('Authorization', 'Bearer fsk_wrong').send(withAmount(1n)),
  ];
  const merchants = await stack.http.post('/x402/settle').set('Authorization', `Bearer ${key}`).send(withAmount(USDC(0.03)));
  const end = await settlementEnd(stack, merchants.headers['x-settlement-id']);
  report.note(`the payer's attempts: ${tally(attempts)}; the merchant's: ${tally([merchants])}`);
  const ok = [
    report.check("the payer's attempts answered 401 unauthorized", '3', String(attempts.filter((a) => a.status === 401 && a.body.errorReason === 'unauthorized').length)),
    report.check("the merchant's settle", 'settled 30000', `${end.state} ${end.amount}`),
    report.check('the payer paid what the merchant settled', `-${USDC(0.03)}`, ((await stack.devnet.balanceOf(payer.address)) - payerBefore).toString()),
    report.check('payments on chain', 1, await transfersOnChain(stack.devnet, fromBlock + 1, payer.address, merchant.address)),
    report.check('fee transfers on chain', 1, await transfersOnChain(stack.devnet, fromBlock + 1, merchant.address, treasury.address)),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it("(upto 9) a payment its merchant settled for 0, settled again for its maximum: refused, nothing moves", async () => {
  const report = abuseReport(
    'upto-9-settled-for-nothing',
    'An upto payment settled for 0, then for its maximum',
    "a payer signs an upto maximum of 0.05 USDC; the merchant settles 0 with its settle key (nothing used); the same payload is then posted to /x402/settle for 0.02 USDC with the merchant's key, and, once the merchant turned settle protection off, for the maximum with no key (which a maximum needs none of); then the merchant's 0 again",
  );
  const payer = await payerWith(USDC(1));
  const { wallet: merchant, key } = await protectedMerchant();
  const [merchantBefore, payerBefore, sentBefore] = await Promise.all([stack.devnet.balanceOf(merchant.address), stack.devnet.balanceOf(payer.address), sentByUs(stack.devnet)]);
  const signed = await uptoRequest(stack.devnet, { payerKey: payer.privateKey, to: merchant.address, value: USDC(0.05) });
  const withAmount = (amount: bigint) => ({ ...signed, paymentRequirements: { ...signed.paymentRequirements, amount: amount.toString() } });
  const nothing = await stack.http.post('/x402/settle').set('Authorization', `Bearer ${key}`).send(withAmount(0n));
  const other = await stack.http.post('/x402/settle').set('Authorization', `Bearer ${key}`).send(withAmount(USDC(0.02)));
  await merchantCall(stack, merchant, MerchantAction.DisableSettleProtection);
  const maximum = await stack.http.post('/x402/settle').send(withAmount(USDC(0.05)));
  const again = await stack.http.post('/x402/settle').send(withAmount(0n));
  await sleep(1000); // anything enqueued would have been sent by now
  report.note(`the merchant's 0: ${tally([nothing])}; another amount: ${tally([other])}; the maximum: ${tally([maximum])}; the 0 again: ${tally([again])}`);
  const success0 = (a: { body: Record<string, unknown> }) => a.body.success === true && a.body.transaction === '' && a.body.amount === '0';
  const refusedAsSettled = (a: { status: number; body: Record<string, unknown> }) => `${a.status} ${a.body.success} ${String(a.body.errorMessage ?? '').includes('settled for 0')}`;
  const ok = [
    report.check("the merchant's settle of 0 answered success without a transaction", true, success0(nothing)),
    report.check("another amount, with the merchant's key: refused, the payment was settled for 0", '200 false true', refusedAsSettled(other)),
    report.check('the maximum, with no key: refused, the payment was settled for 0', '200 false true', refusedAsSettled(maximum)),
    report.check('the 0 again, with no key: refused (only the merchant names less than the maximum)', 401, again.status),
    report.check('merchant balance change', '0', String((await stack.devnet.balanceOf(merchant.address)) - merchantBefore)),
    report.check('payer balance change', '0', String((await stack.devnet.balanceOf(payer.address)) - payerBefore)),
    report.check('transactions sent by the treasury and relayers', 0, (await sentByUs(stack.devnet)) - sentBefore),
    report.check('settlements created', 0, await stack.db.prisma.settlement.count({ where: { merchant: merchant.address.toLowerCase() } })),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(upto 8) a loop of settlements below the fee, which pay none: each merchant gets so many an hour, the rest refused before anything is sent', async () => {
  const report = abuseReport(
    'upto-8-fee-free-loop',
    'Settlements below the fee in a loop (the treasury pays their gas)',
    `an attacker controlling a payer and a merchant (with its settle key) settles 8 upto payments for 1 unit each, which pay no fee; the budget is ${FEE_FREE_PER_MERCHANT} a merchant an hour (FEE_FREE_SETTLEMENTS_PER_MERCHANT_PER_HOUR)`,
  );
  const payer = await payerWith(USDC(1));
  const { wallet: merchant, key } = await protectedMerchant();
  const { treasury } = stack.devnet.accounts;
  const sentBefore = await sentByUs(stack.devnet);
  const fromBlock = await stack.devnet.provider.getBlockNumber();
  const answers = [];
  for (let i = 0; i < 8; i++) {
    const body = await uptoRequest(stack.devnet, { payerKey: payer.privateKey, to: merchant.address, value: USDC(0.05) }, 1n);
    answers.push(await stack.http.post('/x402/settle').set('Authorization', `Bearer ${key}`).send(body));
  }
  const settlements = await stack.db.prisma.settlement.findMany({ where: { merchant: merchant.address.toLowerCase() } });
  const ends = await Promise.all(settlements.map((s) => settlementEnd(stack, s.id)));
  await sleep(500);
  report.note(`answers: ${tally(answers)}`);
  const ok = [
    report.check('settlements created (the budget)', FEE_FREE_PER_MERCHANT, ends.length),
    report.check('settled, each for 1 unit and no fee', `${FEE_FREE_PER_MERCHANT} × 1/0`, `${ends.filter((e) => e.state === 'settled' && e.amount === '1' && e.feeAmount === '0').length} × 1/0`),
    report.check('refused with 429 rate_limited, nothing stored', 8 - FEE_FREE_PER_MERCHANT, answers.filter((a) => a.status === 429 && a.body.errorReason === 'rate_limited').length),
    report.check('transactions sent by the treasury and relayers', FEE_FREE_PER_MERCHANT, (await sentByUs(stack.devnet)) - sentBefore),
    report.check('fee transfers on chain', 0, await transfersOnChain(stack.devnet, fromBlock + 1, merchant.address, treasury.address)),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});
