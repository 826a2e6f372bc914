// No free work (issue #22), on the sequential path: one balance backing many payments, a contract-wallet
// payer whose transfer fails after the fee would be taken, and a merchant minimum raised after verify.
// Real USDC on anvil, the compiled worker, the API in process.
import { Wallet } from 'ethers';
import { MerchantAction } from '@facilitator/merchants';
import { newMerchant, transfersOnChain } from '../support/chain-actions';
import { merchantCall } from '../support/merchant-client';
import { compileTestContract, deploy } from '../support/solidity';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { chainCostOf, contractWalletPayment, ourKeys, outcomes, untilFinal } from './chain-costs';
import { setTimeout as sleep } from 'node:timers/promises';

const FEE = 10_000n;
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});

/** Verifies each body through /v1/verify (each must pass) and settles them all at once. */
async function verifyAndSettleAll(bodies: Array<Record<string, unknown>>, merchant: string): Promise<string[]> {
  const verificationIds: string[] = [];
  for (const body of bodies) {
    const v = await stack.http.post('/v1/verify').send(body);
    expect(v.status).toBe(200);
    verificationIds.push(v.body.verification_id as string);
  }
  const settles = await Promise.all(
    verificationIds.map((id) => stack.http.post('/v1/settle').send({ verification_id: id, destination_address: merchant })),
  );
  for (const s of settles) expect(typeof s.body.settlement_id).toBe('string');
  return settles.map((s) => s.body.settlement_id as string);
}

it('100 payments backed by one 0.01 USDC balance: one is sent and settles, the rest fail before anything is sent', async () => {
  const report = abuseReport(
    'accounting-1-one-balance',
    '100 payments backed by one 0.01 USDC balance',
    'a payer holding 0.01 USDC signs 100 authorizations of 0.01 USDC with different nonces; each passes verify and the pre-flight alone; all are settled at once',
  );
  const payer = Wallet.createRandom();
  await stack.devnet.mint(payer.address, PRICE_UNITS);
  // enough allowance and balance for every fee: only the payer's balance stands between the attack and the merchant
  const merchant = await newMerchant(stack.devnet, { balance: 200n * FEE, allowance: 200n * FEE });
  const bodies = [];
  for (let i = 0; i < 100; i++) {
    const p = await stack.payment({ payerKey: payer.privateKey, to: merchant.address });
    bodies.push(p.formB({ seller_address: merchant.address }));
  }
  const startBlock = await stack.devnet.provider.getBlockNumber();
  const merchantBefore = await stack.devnet.balanceOf(merchant.address);
  const ids = await verifyAndSettleAll(bodies, merchant.address);
  const rows = await untilFinal(stack, ids);
  const cost = await chainCostOf(stack.devnet, ourKeys(stack), startBlock);
  const transfers = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: { in: ids }, purpose: 'transfer' } });
  const fees = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: { in: ids }, purpose: 'fee' } });
  const failedBeforeSending = rows.filter((r) => r.state === 'failed' && !r.feeTxHash && !r.settlementTxHash);
  const feesKeptForFailures = rows.filter((r) => r.state === 'failed' && r.feeTxHash).length;
  report.note(`outcomes: ${outcomes(rows)}`);
  report.note(`gas paid by the treasury and relayers: ${cost.gasUsed} gas, ${cost.wei} wei, in ${cost.transactions} transactions`);
  report.note('without the payer reservation (this test against the worker before it): 49 fees sent, 48 kept by failed items, merchant -0.48 USDC, 2.25M gas');
  const checks = {
    settled: report.check('payments settled', 1, rows.filter((r) => r.state === 'settled').length),
    failedBefore: report.check('items failed before anything was sent', 99, failedBeforeSending.length),
    transfersSent: report.check('transfers sent on chain', 1, transfers.length),
    feesSent: report.check('fee transfers sent on chain', 1, fees.length),
    reverted: report.check('transactions of ours reverted on chain', 0, cost.reverted),
    mined: report.check('transactions of ours mined (one fee, one transfer)', 2, cost.transactions),
    gas: report.assert('gas paid by the treasury and relayers (one fee and one transfer)', '<= 200000', cost.gasUsed.toString(), cost.gasUsed <= 200_000n),
    feesKept: report.check('fees kept for failed items', 0, feesKeptForFailures),
    merchant: report.check('merchant balance change (+0.01 paid, -0.01 fee)', '0', ((await stack.devnet.balanceOf(merchant.address)) - merchantBefore).toString()),
    payer: report.check('payer balance left', '0', (await stack.devnet.balanceOf(payer.address)).toString()),
  };
  report.save();
  expect(checks).toEqual(Object.fromEntries(Object.keys(checks).map((k) => [k, true])));
  // each failure says why, before any fee: the balance backed one payment only
  for (const r of failedBeforeSending) {
    expect(r.errorCode).toBe('settlement_failed');
    expect((r.errorDetails as Record<string, unknown>).fee_status).toBe('not_collected');
  }
});

it('sequential path, a contract-wallet payer whose transfer would fail: refused before its fee, victim merchant fees kept = 0', async () => {
  const report = abuseReport(
    'accounting-2-sequential-contract-payer',
    'Contract-wallet payer failing its transfer on the sequential path',
    'a contract wallet whose owner can flip its ERC-1271 answer after the pre-flight pays a victim merchant 5 times, on a network without the atomic path',
  );
  const wallet = await deploy(stack.devnet.provider, stack.devnet.accounts.deployer.privateKey, compileTestContract('FlippingWallet.sol', 'FlippingWallet'));
  const address = (await wallet.getAddress()).toLowerCase();
  await stack.devnet.mint(address, 10n * PRICE_UNITS);
  const victim = await newMerchant(stack.devnet, { balance: 10n * FEE, allowance: 10n * FEE });
  const startBlock = await stack.devnet.provider.getBlockNumber();
  const before = await stack.devnet.balanceOf(victim.address);
  const ids = await verifyAndSettleAll(Array.from({ length: 5 }, () => contractWalletPayment(stack, address, victim.address)), victim.address);
  const rows = await untilFinal(stack, ids);
  const cost = await chainCostOf(stack.devnet, ourKeys(stack), startBlock);
  report.note(`outcomes: ${outcomes(rows)}`);
  const checks = {
    verified: report.check('payments verified (the wallet says yes until its owner flips it)', 5, ids.length),
    refused: report.check(
      'refused before the fee: "a contract-wallet payer is settled only on the atomic path"',
      5,
      rows.filter((r) => (r.errorDetails as { reason?: string } | null)?.reason === 'a contract-wallet payer is settled only on the atomic path').length,
    ),
    feesKept: report.check('victim merchant fees kept', 0, await transfersOnChain(stack.devnet, startBlock, victim.address, stack.devnet.accounts.treasury.address)),
    balance: report.check('victim merchant balance change', '0', ((await stack.devnet.balanceOf(victim.address)) - before).toString()),
    sent: report.check('transactions of ours mined', 0, cost.transactions),
  };
  report.save();
  expect(checks).toEqual(Object.fromEntries(Object.keys(checks).map((k) => [k, true])));
});

it('a merchant minimum raised after verify (settle protection revoked): the stored verification settles nothing', async () => {
  const report = abuseReport(
    'accounting-3-minimum-revoked',
    'Merchant minimum raised after verify',
    'a 1-unit payment verified while the merchant had settle protection and a minimum of 0, settled by a stranger after the merchant turned protection off (its minimum back to the default)',
  );
  const merchant = await newMerchant(stack.devnet, { balance: 10n * FEE, allowance: 10n * FEE });
  expect((await merchantCall(stack, merchant, MerchantAction.EnableSettleProtection)).status).toBe(200);
  expect((await merchantCall(stack, merchant, MerchantAction.SetMinimum, { minimum: '0' })).status).toBe(200);
  const p = await stack.payment({ to: merchant.address, value: 1n });
  const v = await stack.http.post('/v1/verify').send(p.formB({ seller_address: merchant.address, expected_amount: '1' }));
  expect(v.status).toBe(200);
  expect((await merchantCall(stack, merchant, MerchantAction.DisableSettleProtection)).status).toBe(200);
  await sleep(1_100); // every process reads a merchant's minimum at most once a second
  const startBlock = await stack.devnet.provider.getBlockNumber();
  const before = await stack.devnet.balanceOf(merchant.address);
  // protection is off, so the stranger's settle is accepted at the door (or refused there, once the intake checks the minimum)
  const settle = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: merchant.address });
  const ids = typeof settle.body.settlement_id === 'string' ? [settle.body.settlement_id as string] : [];
  const rows = await untilFinal(stack, ids);
  const cost = await chainCostOf(stack.devnet, ourKeys(stack), startBlock);
  report.note(`settle answered ${settle.status}; outcomes: ${outcomes(rows)}`);
  const refusedForMinimum = rows.every((r) => (r.errorDetails as { reason?: string } | null)?.reason === 'amount below minimum') && (rows.length === 1 || settle.status === 400);
  const checks = {
    settled: report.check('settled', 0, rows.filter((r) => r.state === 'settled').length),
    reason: report.assert('refused for', 'amount below minimum', rows.length > 0 ? (rows[0].errorDetails as { reason?: string }).reason : settle.body.error?.message, refusedForMinimum),
    charged: report.check('merchant balance change', '0', ((await stack.devnet.balanceOf(merchant.address)) - before).toString()),
    sent: report.check('transactions of ours mined', 0, cost.transactions),
  };
  report.save();
  expect(checks).toEqual(Object.fromEntries(Object.keys(checks).map((k) => [k, true])));
});
