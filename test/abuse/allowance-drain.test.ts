// Attacks (a) and (b): strangers spending a merchant's fee allowance, and racing settlements against an
// allowance that covers one fee. Real USDC on anvil, the compiled worker, the API in process.
import { Wallet } from 'ethers';
import { newMerchant, transfersOnChain } from '../support/chain-actions';
import { startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { setTimeout as sleep } from 'node:timers/promises';
import { x402V2Request } from '../support/x402-request';

const FEE = 10_000n;
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});

async function treasuryNonce(): Promise<number> {
  return stack.devnet.provider.getTransactionCount(stack.devnet.accounts.treasury.address, 'latest');
}

async function relayerNonces(): Promise<number> {
  const counts = await Promise.all(stack.devnet.accounts.relayers.map((r) => stack.devnet.provider.getTransactionCount(r.address, 'latest')));
  return counts.reduce((a, b) => a + b, 0);
}

it('(a) 100 zero-value payments from a throwaway key leave the merchant untouched and send nothing', async () => {
  const report = abuseReport('a-zero-value', 'Zero-value payments against a merchant', '100 zero-value authorizations from an empty throwaway key, through /v1 and /x402');
  const merchant = stack.devnet.accounts.merchant.address;
  const [allowanceBefore, balanceBefore, nonceBefore, relayersBefore] = await Promise.all([
    stack.devnet.allowance(merchant, stack.devnet.accounts.treasury.address),
    stack.devnet.balanceOf(merchant),
    treasuryNonce(),
    relayerNonces(),
  ]);
  const attacker = Wallet.createRandom();
  const statuses: Record<string, number> = {};
  const count = (k: string) => (statuses[k] = (statuses[k] ?? 0) + 1);
  for (let i = 0; i < 100; i++) {
    const p = await stack.payment({ payerKey: attacker.privateKey, value: 0n });
    if (i % 2 === 0) {
      const verify = await stack.http.post('/v1/verify').send(p.formB({ expected_amount: '0' }));
      count(`v1 verify ${verify.status} ${verify.body.error?.message ?? ''}`);
      const settle = await stack.http.post('/v1/settle').send(p.formA({ price: undefined, amount: '0' }));
      count(`v1 settle ${settle.status} ${settle.body.error?.code ?? ''}`);
    } else {
      const settle = await stack.http.post('/x402/settle').send(x402V2Request(p.authorization, p.signature, { payTo: merchant, amount: '0', asset: stack.devnet.token }));
      count(`x402 settle ${settle.status} success=${settle.body.success} ${settle.body.errorReason ?? ''}`);
    }
  }
  await sleep(1000); // anything enqueued would have been sent by now
  const [allowanceAfter, balanceAfter, nonceAfter, relayersAfter, settlements] = await Promise.all([
    stack.devnet.allowance(merchant, stack.devnet.accounts.treasury.address),
    stack.devnet.balanceOf(merchant),
    treasuryNonce(),
    relayerNonces(),
    stack.db.prisma.settlement.count({ where: { payer: attacker.address.toLowerCase() } }),
  ]);
  report.note(`answers: ${Object.entries(statuses).map(([k, v]) => `${v} × ${k.trim()}`).join('; ')}`);
  const ok = [
    report.check('merchant allowance change', '0', (allowanceAfter - allowanceBefore).toString()),
    report.check('merchant balance change', '0', (balanceAfter - balanceBefore).toString()),
    report.check('transactions sent by the treasury', 0, nonceAfter - nonceBefore),
    report.check('transactions sent by relayers', 0, relayersAfter - relayersBefore),
    report.check('settlements created', 0, settlements),
    report.check('v1 verify answers "amount below minimum"', 50, statuses['v1 verify 400 amount below minimum'] ?? 0),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
  expect(statuses['x402 settle 200 success=false invalid_exact_evm_payload_authorization_value']).toBe(50);
});

it('(b) 50 concurrent settles against an allowance of exactly one fee: one fee transaction, none reverted', async () => {
  const report = abuseReport('b-allowance-race', 'Concurrent settles against an allowance of one fee', '50 valid payments to a merchant whose allowance covers exactly one fee, settled at once');
  const merchant = await newMerchant(stack.devnet, { balance: 10n * FEE, allowance: FEE });
  const startBlock = await stack.devnet.provider.getBlockNumber();
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) {
    const p = await stack.payment({ to: merchant.address });
    const v = await stack.http.post('/v1/verify').send(p.formB({ seller_address: merchant.address }));
    expect(v.status).toBe(200);
    ids.push(v.body.verification_id);
  }
  const created = await Promise.all(
    ids.map((id) => stack.http.post('/v1/settle').send({ verification_id: id, destination_address: merchant.address })),
  );
  const settlementIds = created.map((r) => r.body.settlement_id as string);
  for (let i = 0; i < 300; i++) {
    const open = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: { notIn: ['settled', 'failed'] } } });
    if (open === 0) break;
    await sleep(100);
  }
  const rows = await stack.db.prisma.settlement.findMany({ where: { id: { in: settlementIds } } });
  const fees = await transfersOnChain(stack.devnet, startBlock, merchant.address, stack.devnet.accounts.treasury.address);
  const feeRows = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: { in: settlementIds }, purpose: 'fee' } });
  const codes = new Map<string, number>();
  for (const r of rows) codes.set(`${r.state}/${r.errorCode ?? '-'}/${(r.errorDetails as { reason?: string } | null)?.reason ?? ''}`, (codes.get(`${r.state}/${r.errorCode ?? '-'}/${(r.errorDetails as { reason?: string } | null)?.reason ?? ''}`) ?? 0) + 1);
  report.note(`outcomes: ${[...codes].map(([k, v]) => `${v} × ${k}`).join('; ')}`);
  const ok = [
    report.check('settlements final', 50, rows.filter((r) => r.state === 'settled' || r.state === 'failed').length),
    report.check('settled', 1, rows.filter((r) => r.state === 'settled').length),
    report.check('failed with insufficient_allowance, nothing sent', 49, rows.filter((r) => r.errorCode === 'insufficient_allowance').length),
    report.check('fee transactions sent', 1, feeRows.length),
    report.check('fee transactions reverted', 0, feeRows.filter((r) => r.status === 'reverted').length),
    report.check('fee transfers on chain', 1, fees),
    report.check('merchant allowance left', '0', (await stack.devnet.allowance(merchant.address, stack.devnet.accounts.treasury.address)).toString()),
  ];
  report.save();
  expect(ok.every(Boolean)).toBe(true);
});

it('(b) repeated fee reverts: the payment waits out a back-off, and the merchant is paused instead of looping', async () => {
  const report = abuseReport('b2-fee-revert-griefing', 'Repeated fee reverts', 'settling again a payment whose fee reverted, and a merchant whose fee transfers keep reverting');
  const merchant = await newMerchant(stack.devnet, { balance: 10n * FEE, allowance: 10n * FEE });
  const p = await stack.payment({ to: merchant.address });
  const v = await stack.http.post('/v1/verify').send(p.formB({ seller_address: merchant.address }));
  const verification = await stack.db.prisma.verification.findUniqueOrThrow({ where: { id: v.body.verification_id } });
  // what a reverted fee leaves: failed, fee_collection_failed, the fee's hash, the payment released
  const revertedFee = (n: number, nonce = verification.nonce!) => ({
    id: `stl_revert_${n}_${Date.now()}`, verificationId: verification.id, surface: 'v1', state: 'failed' as const, chainId: verification.chainId, network: verification.network,
    tokenAddress: verification.tokenAddress!, nonceSpace: verification.nonceSpace!, payer: verification.payer!, merchant: verification.merchant!, amount: verification.amount!,
    nonce, feeAmount: FEE.toString(), feeTxHash: `0x${'ab'.repeat(32)}`, errorCode: 'fee_collection_failed', errorMessage: 'fee reverted',
  });
  await stack.db.prisma.settlement.create({ data: revertedFee(1) });
  const again = await stack.http.post('/v1/settle').send({ verification_id: verification.id, destination_address: merchant.address });
  const refusedAgain = report.check('settling the payment again right after its fee reverted', '400 fee_collection_failed', `${again.status} ${again.body.error?.code}`);
  const backOffGiven = report.check('back-off given', true, typeof again.body.error?.details?.retry_after === 'string');

  // two more reverts of other payments of this merchant: three within the window pause it
  await stack.db.prisma.settlement.create({ data: revertedFee(2, `0x${'01'.repeat(32)}`) });
  await stack.db.prisma.settlement.create({ data: revertedFee(3, `0x${'02'.repeat(32)}`) });
  const fresh = await stack.payment({ to: merchant.address });
  const fv = await stack.http.post('/v1/verify').send(fresh.formB({ seller_address: merchant.address }));
  const startBlock = await stack.devnet.provider.getBlockNumber();
  const created = await stack.http.post('/v1/settle').send({ verification_id: fv.body.verification_id, destination_address: merchant.address });
  let row = null;
  for (let i = 0; i < 100 && row?.state !== 'failed' && row?.state !== 'settled'; i++) {
    await sleep(100);
    row = await stack.db.prisma.settlement.findUnique({ where: { id: created.body.settlement_id } });
  }
  const details = row?.errorDetails as Record<string, unknown> | undefined;
  const ok = [
    report.check('a new payment to the paused merchant', 'failed fee_collection_failed', `${row?.state} ${row?.errorCode}`),
    report.check('pause stated', true, typeof details?.paused_until === 'string'),
    report.check('fee transfers sent while paused', 0, await transfersOnChain(stack.devnet, startBlock, merchant.address, stack.devnet.accounts.treasury.address)),
  ];
  report.save();
  expect(again.status).toBe(400);
  expect(again.body.error.code).toBe('fee_collection_failed');
  expect([refusedAgain, backOffGiven, ...ok].every(Boolean)).toBe(true);
});
