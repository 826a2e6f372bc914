// Attacks (permit2 1-5): the abuse suite's attacks against `exact` through Permit2 — zero-value payments, one
// Permit2 nonce signed to two merchants, a payer whose payment passes verify and cannot execute at settle
// (it revoked its approval of Permit2: what a wallet that behaves differently in simulation and on chain
// does to a Permit2 payment), a contract-wallet payer whose ERC-1271 check burns gas, and a chain where
// x402's exact proxy is missing (a call to it succeeds and moves nothing). Real USDC, Permit2 and the exact proxy's double on anvil, the compiled
// worker, the API in process.
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { Wallet } from 'ethers';
import { newMerchant, sentByUs, transfersOnChain } from '../support/chain-actions';
import { approvePermit2, permit2Request } from '../support/permit2-request';
import { settlementEnd } from '../support/settlement-end';
import { startTestStack, type TestStack } from '../support/test-stack';
import { compileTestContract, deploy } from '../support/solidity';
import { abuseReport } from './abuse-report';

const USDC = (units: number) => BigInt(Math.round(units * 1_000_000));
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});


const waitForEnd = (settlementId: string) => settlementEnd(stack, settlementId);

it("(permit2 5) a chain where x402's exact proxy is missing: no Permit2 payment verifies or settles, nothing charged, none told settled", async () => {
  const report = abuseReport(
    'permit2-5-proxy-missing',
    "Permit2 payments on a chain without x402's exact proxy",
    "x402's exact proxy's code is removed (as on a chain it was never deployed to); a payer who approved Permit2 verifies and settles 5 payments: a call to the empty address would succeed and move nothing",
  );
  // first in this file: the API learns once that the proxy is there (contracts at canonical addresses stay)
  // and asks no more, so the chain without it is the one it starts on
  const proxy = '0x402085c248eea27d92e8b30b2c58ed07f9e20001';
  const code = await stack.devnet.provider.getCode(proxy);
  const payer = Wallet.createRandom();
  await stack.devnet.mint(payer.address, USDC(1));
  await approvePermit2(stack.devnet, payer.privateKey);
  const merchant = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  await stack.devnet.provider.send('anvil_setCode', [proxy, '0x']);
  try {
    const [merchantBefore, sentBefore] = await Promise.all([stack.devnet.balanceOf(merchant.address), sentByUs(stack.devnet)]);
    const bodies = await Promise.all(Array.from({ length: 5 }, () => permit2Request(stack.devnet, { payerKey: payer.privateKey, to: merchant.address, value: USDC(0.05) })));
    const verifies = await Promise.all(bodies.map((b) => stack.http.post('/x402/verify').send(b)));
    const settles = await Promise.all(bodies.map((b) => stack.http.post('/x402/settle').send(b)));
    await sleep(1000); // anything enqueued would have been sent by now
    const ok = [
      report.check('verify answers', '5 × false permit2_proxy_not_deployed', `${verifies.filter((v) => v.body.isValid === false && v.body.invalidReason === 'permit2_proxy_not_deployed').length} × false permit2_proxy_not_deployed`),
      report.check('settle answers', '5 × false permit2_proxy_not_deployed', `${settles.filter((v) => v.body.success === false && v.body.errorReason === 'permit2_proxy_not_deployed').length} × false permit2_proxy_not_deployed`),
      report.check('settlements created', 0, await stack.db.prisma.settlement.count({ where: { merchant: merchant.address.toLowerCase() } })),
      report.check('merchant balance change (no fee taken)', '0', String((await stack.devnet.balanceOf(merchant.address)) - merchantBefore)),
      report.check('transactions sent by the treasury and relayers', 0, (await sentByUs(stack.devnet)) - sentBefore),
    ];
    report.note(`refused as: ${verifies[0].body.invalidMessage}`);
    report.save();
    expect(ok.every(Boolean)).toBe(true);
  } finally {
    await stack.devnet.provider.send('anvil_setCode', [proxy, code]);
  }
});

it('(permit2 1) 40 zero-value Permit2 payments from a throwaway key leave the merchant untouched and send nothing', async () => {
  const report = abuseReport('permit2-1-zero-value', 'Zero-value Permit2 payments against a merchant', '40 zero-value Permit2 payments from a throwaway key that approved Permit2, through /x402/verify and /x402/settle');
  const merchant = stack.devnet.accounts.merchant.address;
  const attacker = Wallet.createRandom();
  await approvePermit2(stack.devnet, attacker.privateKey);
  const [allowanceBefore, balanceBefore, sentBefore] = await Promise.all([
    stack.devnet.allowance(merchant, stack.devnet.accounts.treasury.address),
    stack.devnet.balanceOf(merchant),
    sentByUs(stack.devnet),
  ]);
  const answers: Record<string, number> = {};
  for (let i = 0; i < 40; i++) {
    const body = await permit2Request(stack.devnet, { payerKey: attacker.privateKey, to: merchant, value: 0n });
    const res = await stack.http.post(i % 2 === 0 ? '/x402/verify' : '/x402/settle').send(body);
    const key = `${i % 2 === 0 ? 'verify' : 'settle'} ${res.status} ${res.body.invalidReason ?? res.body.errorReason ?? ''}`;
    answers[key] = (answers[key] ?? 0) + 1;
  }
  await sleep(1000); // anything enqueued would have been sent by now
  const [allowanceAfter, balanceAfter, sentAfter, settlements] = await Promise.all([
    stack.devnet.allowance(merchant, stack.devnet.accounts.treasury.address),
    stack.devnet.balanceOf(merchant),
    sentByUs(stack.devnet),
    stack.db.prisma.settlement.count({ where: { payer: attacker.address.toLowerCase() } }),
  ]);
  report.note(`answers: ${Object.entries(answers).map(([k, v]) => `${v} × ${k.trim()}`).join('; ')}`);
  const ok = [
    report.check('merchant allowance change', '0', (allowanceAfter - allowanceBefore).toString()),
    report.check('merchant balance change', '0', (balanceAfter - balanceBefore).toString()),
    report.check('transactions sent by the treasury and relayers', 0, sentAfter - sentBefore),
    report.check('settlements created', 0, settlements),
    report.check('answers "permit2_invalid_amount" (the minimum), verify and settle', '20, 20', `${answers['verify 200 permit2_invalid_amount'] ?? 0}, ${answers['settle 200 permit2_invalid_amount'] ?? 0}`),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(permit2 2) one Permit2 nonce signed to two merchants: the victim is never told "settled" with the cheap payment\'s outcome', async () => {
  const report = abuseReport(
    'permit2-2-same-nonce',
    'Reported paid to another merchant (same Permit2 nonce)',
    "a payer signs 0.02 USDC to its own shop and 100 USDC to a victim with one Permit2 nonce, settles the cheap one, then verifies and settles the dear one at the victim's, before and after the cheap one settled",
  );
  const attacker = Wallet.createRandom();
  await stack.devnet.mint(attacker.address, USDC(0.02));
  await approvePermit2(stack.devnet, attacker.privateKey);
  const shop = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const victim = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const fromBlock = await stack.devnet.provider.getBlockNumber();
  const victimBefore = await stack.devnet.balanceOf(victim.address);
  const nonce = BigInt('0x' + randomBytes(32).toString('hex')).toString();
  const cheap = await permit2Request(stack.devnet, { payerKey: attacker.privateKey, to: shop.address, value: USDC(0.02), nonce });
  const dear = await permit2Request(stack.devnet, { payerKey: attacker.privateKey, to: victim.address, value: USDC(100), nonce });
  let toldSettled = 0;
  const answers: string[] = [];
  const note = (what: string, body: Record<string, unknown>) => {
    if (body.success === true || body.isValid === true) toldSettled++;
    answers.push(`${what}: ${body.isValid ?? body.success} ${body.invalidReason ?? body.errorReason ?? ''}`);
    return body;
  };

  const cheapVerify = await stack.http.post('/x402/verify').send(cheap);
  expect(cheapVerify.body.isValid).toBe(true);
  const cheapSettle = stack.http.post('/x402/settle').send(cheap);
  const duringVerify = note('victim verify while the cheap one is verified and settling', (await stack.http.post('/x402/verify').send(dear)).body);
  const duringSettle = note('victim settle while the cheap one is settling', (await stack.http.post('/x402/settle').send(dear)).body);
  const cheapAnswer = (await cheapSettle).body;
  const afterVerify = note('victim verify after the cheap one settled', (await stack.http.post('/x402/verify').send(dear)).body);
  const afterSettle = note('victim settle after the cheap one settled', (await stack.http.post('/x402/settle').send(dear)).body);

  const cheapSettlement = await stack.db.prisma.settlement.findFirstOrThrow({ where: { merchant: shop.address.toLowerCase() } });
  const ended = await waitForEnd(cheapSettlement.id);
  report.note(`answers: ${answers.join('; ')}`);
  const ok = [
    report.check('the cheap payment settled (the attacker paid its own shop)', 'settled', `${ended.state}${cheapAnswer.success === true ? '' : ` (answer ${cheapAnswer.errorReason})`}`),
    report.check('victim answers, in turn', 'false permit2_invalid_nonce ×4', [duringVerify, duringSettle, afterVerify, afterSettle].map((b) => `${b.isValid ?? b.success} ${b.invalidReason ?? b.errorReason}`).join(', ') === Array(4).fill('false permit2_invalid_nonce').join(', ') ? 'false permit2_invalid_nonce ×4' : answers.join('; ')),
    report.check('answers that told the victim "valid" or "settled"', 0, toldSettled),
    report.check('victim merchant balance change', '0', String((await stack.devnet.balanceOf(victim.address)) - victimBefore)),
    report.check('payments from the attacker to the victim on chain', 0, await transfersOnChain(stack.devnet, fromBlock, attacker.address, victim.address)),
    report.check("settlements of the victim's payment", 0, await stack.db.prisma.settlement.count({ where: { merchant: victim.address.toLowerCase() } })),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(permit2 3) 10 payments whose payer revokes its Permit2 approval after verify: none charged, nothing sent, none told settled', async () => {
  const report = abuseReport(
    'permit2-3-revoked-approval',
    'Permit2 payments that cannot execute at settle',
    'a payer approves Permit2, has 10 payments verified, revokes its approval (allowance 0), then settles all 10 at once: each passed verify and would revert on chain',
  );
  const attacker = Wallet.createRandom();
  await stack.devnet.mint(attacker.address, USDC(1));
  await approvePermit2(stack.devnet, attacker.privateKey);
  const merchant = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const bodies = await Promise.all(Array.from({ length: 10 }, () => permit2Request(stack.devnet, { payerKey: attacker.privateKey, to: merchant.address, value: USDC(0.05) })));
  const verified = await Promise.all(bodies.map((b) => stack.http.post('/x402/verify').send(b)));
  expect(verified.map((v) => v.body.isValid)).toEqual(Array(10).fill(true));
  await approvePermit2(stack.devnet, attacker.privateKey, 0n);
  const [merchantBefore, sentBefore] = await Promise.all([stack.devnet.balanceOf(merchant.address), sentByUs(stack.devnet)]);

  const settled = await Promise.all(bodies.map((b) => stack.http.post('/x402/settle').send(b)));
  const ends = await Promise.all(
    (await stack.db.prisma.settlement.findMany({ where: { merchant: merchant.address.toLowerCase() } })).map((s) => waitForEnd(s.id)),
  );
  const [merchantAfter, sentAfter] = await Promise.all([stack.devnet.balanceOf(merchant.address), sentByUs(stack.devnet)]);
  report.note(`answers: ${[...new Set(settled.map((s) => `${s.body.success} ${s.body.errorReason ?? ''}`))].join('; ')}; ends: ${[...new Set(ends.map((e) => `${e.state} ${e.errorCode} ${e.feeTxHash ? 'fee sent' : 'no fee'}`))].join('; ')}`);
  const ok = [
    report.check('answers that told the merchant "settled"', 0, settled.filter((s) => s.body.success === true).length),
    report.check('answers saying why: success=false permit2_allowance_required', 10, settled.filter((s) => s.body.success === false && s.body.errorReason === 'permit2_allowance_required').length),
    report.check('merchant balance change (no fee taken)', '0', String(merchantAfter - merchantBefore)),
    report.check('transactions sent by the treasury and relayers', 0, sentAfter - sentBefore),
    report.check('settlements that ended failed before any fee', ends.length, ends.filter((e) => e.state === 'failed' && e.feeTxHash === null).length),
  ];
  report.save();
  expect(ends.length).toBeGreaterThan(0);
  expect(ok.every(Boolean)).toBe(true);
});

it('(permit2 4) a contract-wallet payer whose ERC-1271 check burns gas, next to 10 honest Permit2 payments', async () => {
  const report = abuseReport(
    'permit2-4-gas-burning-wallet',
    'A gas-burning contract wallet paying through Permit2',
    "a contract wallet whose isValidSignature loops (~1e9 gas) verifies and settles a Permit2 payment at the same instant as 10 honest Permit2 payments from keys",
  );
  const { provider, accounts } = stack.devnet;
  const burner = (await (await deploy(provider, accounts.deployer.privateKey, compileTestContract('GasBurningWallet.sol', 'GasBurningWallet'), [10_000_000])).getAddress()).toLowerCase();
  const merchant = stack.devnet.accounts.merchant.address;
  const honestKeys = Array.from({ length: 10 }, () => Wallet.createRandom());
  for (const key of honestKeys) {
    await stack.devnet.mint(key.address, USDC(0.05));
    await approvePermit2(stack.devnet, key.privateKey);
  }
  const sentBefore = await sentByUs(stack.devnet);
  const burning = await permit2Request(stack.devnet, { payerKey: Wallet.createRandom().privateKey, from: burner, signature: '0x' + 'ab'.repeat(65), to: merchant, value: USDC(0.05) });
  const honest = await Promise.all(honestKeys.map((k) => permit2Request(stack.devnet, { payerKey: k.privateKey, to: merchant, value: USDC(0.05) })));
  const started = performance.now();
  const [burnVerify, burnSettle, ...honestVerifies] = await Promise.all([
    stack.http.post('/x402/verify').send(burning),
    stack.http.post('/x402/settle').send(burning),
    ...honest.map((b) => stack.http.post('/x402/verify').send(b)),
  ]);
  const ms = Math.round(performance.now() - started);
  await sleep(1000); // anything enqueued for the burner would have been sent by now
  const ok = [
    report.check('gas burner: verify answer', 'false invalid_permit2_signature', `${burnVerify.body.isValid} ${burnVerify.body.invalidReason}`),
    report.check('gas burner: settle answer', 'false invalid_permit2_signature', `${burnSettle.body.success} ${burnSettle.body.errorReason}`),
    report.check('honest Permit2 payments verified', '10/10', `${honestVerifies.filter((v) => v.body.isValid === true).length}/10`),
    report.check("settlements of the burner's payment", 0, await stack.db.prisma.settlement.count({ where: { payer: burner } })),
    report.check('transactions sent by the treasury and relayers', 0, (await sentByUs(stack.devnet)) - sentBefore),
  ];
  report.note(`all 12 answered in ${ms} ms; the burner refused as: ${burnVerify.body.invalidMessage}`);
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(permit2 6) one approval of Permit2 behind 5 payments settled at once: one fee and one payment, the others end before any fee', async () => {
  const report = abuseReport(
    'permit2-6-one-approval-many-payments',
    'One Permit2 approval backing many payments',
    'a payer holding 5 payments\' worth approves Permit2 for exactly one, signs 5 payments (fresh nonces) to a merchant and settles them all at once: each passes verify alone, and only the first could execute',
  );
  const price = USDC(0.05);
  const payer = Wallet.createRandom();
  await stack.devnet.mint(payer.address, 5n * price);
  await approvePermit2(stack.devnet, payer.privateKey, price);
  const merchant = await newMerchant(stack.devnet, { balance: USDC(1), allowance: USDC(1) });
  const { treasury } = stack.devnet.accounts;
  const fromBlock = await stack.devnet.provider.getBlockNumber();
  const bodies = await Promise.all(Array.from({ length: 5 }, () => permit2Request(stack.devnet, { payerKey: payer.privateKey, to: merchant.address, value: price })));
  const answers = await Promise.all(bodies.map((b) => stack.http.post('/x402/settle').send(b)));
  const ends = await Promise.all((await stack.db.prisma.settlement.findMany({ where: { merchant: merchant.address.toLowerCase() } })).map((s) => waitForEnd(s.id)));
  const fees = await transfersOnChain(stack.devnet, fromBlock + 1, merchant.address, treasury.address);
  const payments = await transfersOnChain(stack.devnet, fromBlock + 1, payer.address, merchant.address);
  report.note(`answers: ${answers.map((a) => `${a.body.success} ${a.body.errorReason ?? ''}`.trim()).join('; ')}; ends: ${ends.map((e) => `${e.state}${e.feeTxHash ? ' (fee sent)' : ''} ${e.errorMessage ?? ''}`.trim()).join('; ')}`);
  const ok = [
    report.check('settlements created', 5, ends.length),
    report.check('settled', 1, ends.filter((e) => e.state === 'settled').length),
    report.check('fee transfers on chain', 1, fees),
    report.check('payments on chain', 1, payments),
    report.check('failed settlements that had taken a fee', 0, ends.filter((e) => e.state === 'failed' && e.feeTxHash !== null).length),
    report.check('answers that told the merchant "settled"', 1, answers.filter((a) => a.body.success === true).length),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});
