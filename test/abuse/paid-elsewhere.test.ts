// Attack (identity 4): "paid elsewhere" counted for the wrong payment. Two 100 USDC payments to a victim are being
// settled; after their fees are sent, one attacker transaction uses both nonces to pay the attacker's shop
// 0.01 USDC each, and pays the victim 100 USDC once with a third authorization. Our transfers then find
// their nonces used. Only what each authorization itself paid the merchant may count: neither did, so
// neither payment may be reported settled (before the fix the transaction's sum was counted for each, and
// both were). Real USDC on anvil with 1 s blocks, the compiled worker, the API in process.
import { randomBytes } from 'node:crypto';
import { Contract, Wallet } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { newMerchant } from '../support/chain-actions';
import { compileTestContract, deploy } from '../support/solidity';
import { startTestStack, type PaymentBodies, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';

const FEE = 10_000n;
const VALUE = 100_000_000n; // 100 USDC
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ devnet: { blockTime: 1 } });
  await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});

async function feeBroadcast(settlementId: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const fee = await stack.db.prisma.chainTransaction.findFirst({ where: { settlementId, purpose: 'fee' } });
    if (fee && fee.status === 'broadcast') return;
    await sleep(20);
  }
  throw new Error(`the fee of ${settlementId} was never sent`);
}

async function finalStatus(settlementId: string) {
  for (let i = 0; i < 200; i++) {
    const res = await stack.http.get(`/v1/settlements/${settlementId}`);
    if (res.body.status !== 'pending') return res.body as { status: string; error?: { code: string; details: Record<string, unknown> } };
    await sleep(100);
  }
  throw new Error(`settlement ${settlementId} never ended`);
}

const asCall = (p: PaymentBodies) => ({ ...p.authorization, signature: p.signature });

it('(identity 4) a transaction that used the nonces to pay someone else and paid the merchant once: no payment is reported settled', async () => {
  const report = abuseReport(
    'identity-4-paid-elsewhere',
    'Reported paid by another transfer of the same transaction',
    "two 100 USDC payments to a victim are settling; after their fees, one transaction uses both nonces to pay the attacker 0.01 USDC each and pays the victim 100 USDC once with another authorization",
  );
  const victim = await newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 1_000_000n });
  const shop = Wallet.createRandom().address;
  const deployer = stack.devnet.accounts.deployer.privateKey;
  const multicall = (await deploy(stack.devnet.provider, deployer, compileTestContract('AuthorizationMulticall.sol', 'AuthorizationMulticall'))) as Contract;
  const victimBefore = await stack.devnet.balanceOf(victim.address);

  // mining held: the fees go to the node, and the attacker's transaction joins their block
  await stack.devnet.provider.send('evm_setIntervalMining', [0]);
  const dear = await Promise.all([0, 1].map(() => stack.payment({ to: victim.address, value: VALUE, nonce: `0x${randomBytes(32).toString('hex')}` })));
  const settlementIds: string[] = [];
  for (const p of dear) {
    const v = await stack.http.post('/v1/verify').send(p.formB({ seller_address: victim.address, expected_amount: VALUE.toString() }));
    expect(v.status).toBe(200);
    const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: victim.address });
    settlementIds.push(s.body.settlement_id as string);
  }
  await Promise.all(settlementIds.map(feeBroadcast));
  const cheap = await Promise.all(dear.map((p) => stack.payment({ to: shop, value: 10_000n, nonce: p.authorization.nonce })));
  const once = await stack.payment({ to: victim.address, value: VALUE, nonce: `0x${randomBytes(32).toString('hex')}` });
  const attack = await (multicall.connect(new Wallet(deployer, stack.devnet.provider)) as Contract).run(stack.devnet.token, [...cheap.map(asCall), asCall(once)]);
  await stack.devnet.provider.send('evm_mine', []);
  await stack.devnet.provider.send('evm_setIntervalMining', [1]);
  const receipt = await stack.devnet.provider.waitForTransaction(attack.hash as string);
  expect(receipt?.status).toBe(1);

  const ends = await Promise.all(settlementIds.map(finalStatus));
  const told = ends.filter((e) => e.status === 'settled').length;
  const victimChange = (await stack.devnet.balanceOf(victim.address)) - victimBefore;
  report.check('attacker transaction: both nonces used to pay the attacker, the victim paid once by a third authorization', 1, receipt?.status);
  report.check('payments reported settled to the victim', 0, told);
  report.check('their outcome', 'failed, failed', ends.map((e) => e.status).join(', '));
  report.check("the failures say the transfer could not run (the nonce was used), not that someone else paid", 'false, false', ends.map((e) => String(e.error?.details.executed_by_third_party === true)).join(', '));
  report.check('victim balance change: 100 USDC from the third authorization, minus the two fees kept (sequential path)', String(VALUE - 2n * FEE), String(victimChange));
  report.save();
  expect(told).toBe(0);
  expect(ends.map((e) => e.status)).toEqual(['failed', 'failed']);
  expect(ends.every((e) => e.error?.details.executed_by_third_party !== true)).toBe(true);
  expect(victimChange).toBe(VALUE - 2n * FEE);
}, 120_000);
