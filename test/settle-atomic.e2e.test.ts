// The atomic path end to end (issue 14): the treasury delegates to the settlement executor, and the
// worker collects the fee and executes the transfer in one transaction of it, on the real USDC.
import { parseEther, parseUnits, Wallet } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { MerchantAction } from '@facilitator/merchants';
import { X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY, EXACT_PERMIT2, UPTO_PERMIT2 } from '@facilitator/payment-mechanisms';
import { executorInterface } from '@facilitator/evm-executor';
import { balances, cancelAuthorization, difference, newMerchant } from './support/chain-actions';
import { merchantCall } from './support/merchant-client';
import { approvePermit2, permit2Request, uptoRequest } from './support/permit2-request';
import { PRICE_UNITS, startTestStack, type TestStack } from './support/test-stack';
import type { WorkerProcess } from './support/worker-process';

const FEE = 10_000n;
let stack: TestStack;
let worker: WorkerProcess;

beforeAll(async () => {
  stack = await startTestStack({ executor: true, env: { SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '300' } });
  worker = await stack.startWorker();
  await waitFor(() => worker.lines.some((l) => l.includes('settlements are atomic')), 'the worker to choose the atomic path');
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function settleFormA(p: Awaited<ReturnType<TestStack['payment']>>) {
  const body = p.formA();
  expect((await stack.http.post('/v1/verify').send(body)).status).toBe(200);
  return stack.http.post('/v1/settle').send(body);
}

async function historyOf(settlementId: string): Promise<string[]> {
  const rows = await stack.db.prisma.settlementTransition.findMany({ where: { settlementId }, orderBy: { id: 'asc' } });
  return rows.map((h) => h.toState);
}

it('collects the fee and executes the transfer in one transaction, walking every state of the spec', async () => {
  const before = await balances(stack.devnet);
  const res = await settleFormA(await stack.payment());
  expect(res.status).toBe(200);
  const d = res.body.details;
  expect(d).toMatchObject({ fee_collection_status: 'collected', fee_collected_first: true, fee_amount_wei: 10000 });
  // one transaction: both hashes are the same
  expect(d.fee_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
  expect(d.settlement_tx_hash).toBe(d.fee_tx_hash);
  expect(new Date(d.fee_collection_timestamp).getTime()).toBeLessThan(new Date(d.settlement_timestamp).getTime());
  expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE_UNITS, merchant: PRICE_UNITS - FEE, treasury: FEE });
  expect(await historyOf(d.settlement_id)).toEqual(['pending', 'check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);

  // sent by a relayer to the treasury's own address, and the fee's Transfer comes before the payment's
  const receipt = (await stack.devnet.provider.getTransactionReceipt(d.fee_tx_hash))!;
  const tx = (await stack.devnet.provider.getTransaction(d.fee_tx_hash))!;
  expect(tx.to!.toLowerCase()).toBe(stack.devnet.accounts.treasury.address.toLowerCase());
  expect(stack.devnet.accounts.relayers.map((r) => r.address)).toContain(tx.from);
  const transfers = receipt.logs.filter((l) => l.address.toLowerCase() === stack.devnet.token.toLowerCase() && l.topics.length === 3 && l.data.length === 66);
  expect(transfers.map((l) => '0x' + l.topics[1].slice(26))).toEqual([stack.devnet.accounts.merchant.address.toLowerCase(), stack.devnet.accounts.payer.address.toLowerCase()]);
  const settlement = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: d.settlement_id } });
  expect(settlement.settlementMode).toBe('atomic');
});

it('settles an exact payment through Permit2 in one transaction too: the fee, then the exact proxy\'s settle, in one item', async () => {
  const { devnet } = stack;
  const { payer, merchant, treasury } = devnet.accounts;
  await approvePermit2(devnet, payer.privateKey);
  const before = await balances(devnet);
  const body = await permit2Request(devnet, { payerKey: payer.privateKey, to: merchant.address, value: PRICE_UNITS });
  expect((await stack.http.post('/x402/verify').send(body)).body).toMatchObject({ isValid: true });
  const res = await stack.http.post('/x402/settle').send(body);
  expect(res.body).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  expect(difference(await balances(devnet), before)).toEqual({ payer: -PRICE_UNITS, merchant: PRICE_UNITS - FEE, treasury: FEE });

  // one transaction, sent by a relayer to the treasury: its item calls x402's exact proxy, fee first
  const settlement = await stack.db.prisma.settlement.findFirstOrThrow({ where: { settlementTxHash: res.body.transaction } });
  expect(settlement).toMatchObject({ mechanism: EXACT_PERMIT2, settlementMode: 'atomic', state: 'settled', feeTxHash: res.body.transaction });
  const tx = (await devnet.provider.getTransaction(res.body.transaction))!;
  expect(tx.to!.toLowerCase()).toBe(treasury.address.toLowerCase());
  expect(devnet.accounts.relayers.map((r) => r.address)).toContain(tx.from);
  const [items] = executorInterface.decodeFunctionData('settle', tx.data);
  expect(items.map((i: { target: string; nonce: string }) => [i.target.toLowerCase(), i.nonce])).toEqual([[X402_EXACT_PERMIT2_PROXY, settlement.nonce]]);
  const receipt = (await devnet.provider.getTransactionReceipt(res.body.transaction))!;
  const transfers = receipt.logs.filter((l) => l.address.toLowerCase() === devnet.token.toLowerCase() && l.topics.length === 3 && l.data.length === 66);
  expect(transfers.map((l) => '0x' + l.topics[1].slice(26))).toEqual([merchant.address.toLowerCase(), payer.address.toLowerCase()]);
  expect(await historyOf(settlement.id)).toEqual(['pending', 'check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);
});

it("settles an upto payment in one transaction when its amount pays the fee (its item calls the upto proxy as the treasury, the facilitator the payer named); one below the fee, which the executor cannot take, fails at once in this keyless worker", async () => {
  const { devnet } = stack;
  const { payer, merchant, treasury } = devnet.accounts;
  await approvePermit2(devnet, payer.privateKey);
  // only the merchant names less than the maximum: by its settle key
  const key = (await merchantCall(stack, new Wallet(merchant.privateKey), MerchantAction.EnableSettleProtection)).body.settle_key as string;
  const maximum = 10n * PRICE_UNITS;
  const settle = async (used: bigint) => {
    const body = await uptoRequest(devnet, { payerKey: payer.privateKey, to: merchant.address, value: maximum }, used);
    return stack.http.post('/x402/settle').set('Authorization', `Bearer ${key}`).send(body);
  };
  try {
    const used = maximum / 2n;
    let before = await balances(devnet);
    const res = await settle(used);
    expect(res.body).toMatchObject({ success: true, amount: used.toString(), transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(difference(await balances(devnet), before)).toEqual({ payer: -used, merchant: used - FEE, treasury: FEE });
    const atomic = await stack.db.prisma.settlement.findFirstOrThrow({ where: { settlementTxHash: res.body.transaction } });
    expect(atomic).toMatchObject({ mechanism: UPTO_PERMIT2, settlementMode: 'atomic', state: 'settled', amount: used.toString(), feeAmount: FEE.toString(), feeTxHash: res.body.transaction });
    const tx = (await devnet.provider.getTransaction(res.body.transaction))!;
    expect(tx.to!.toLowerCase()).toBe(treasury.address.toLowerCase());
    const [items] = executorInterface.decodeFunctionData('settle', tx.data);
    expect(items.map((i: { target: string; amount: bigint }) => [i.target.toLowerCase(), i.amount])).toEqual([[X402_UPTO_PERMIT2_PROXY, used]]);

    // below the fee it is charged none, which only the sequential path does, from the treasury's key: this
    // worker holds none, so it fails at once, before anything is sent
    before = await balances(devnet);
    const free = await settle(FEE - 1n);
    expect(free.body).toMatchObject({ success: false, errorMessage: expect.stringContaining('a settlement charged no fee settles only on the sequential path') });
    expect(difference(await balances(devnet), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
  } finally {
    await merchantCall(stack, new Wallet(merchant.privateKey), MerchantAction.DisableSettleProtection);
  }
});

it('refuses a merchant without allowance or without balance before anything is sent: nothing moves', async () => {
  for (const opts of [
    { balance: 10n ** 9n, allowance: 0n },
    { balance: 0n, allowance: 10n ** 9n },
  ]) {
    const merchant = await newMerchant(stack.devnet, opts);
    const before = await balances(stack.devnet, merchant.address);
    const p = await stack.payment({ to: merchant.address });
    const body = p.formA({ payTo: merchant.address });
    expect((await stack.http.post('/v1/verify').send(body)).status).toBe(200);
    const res = await stack.http.post('/v1/settle').send(body);
    expect(res.status).toBe(400);
    expect(['insufficient_allowance', 'fee_collection_failed']).toContain(res.body.error.code);
    expect(difference(await balances(stack.devnet, merchant.address), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
    expect(await stack.devnet.usdc.authorizationState(p.authorization.from, p.authorization.nonce)).toBe(false);
  }
});

describe('a batch with mixed outcomes (mining held back, then the chain changes under it)', () => {
  it('settles the good items and fails the others with nothing moved for them', async () => {
    const { devnet } = stack;
    const provider = devnet.provider;
    const fundedPayer = async () => {
      const payer = Wallet.createRandom();
      await devnet.mint(payer.address, 10n ** 8n);
      await devnet.setEthBalance(payer.address, parseEther('1'));
      return payer;
    };
    const revoking = await newMerchant(devnet, { balance: 10n ** 9n, allowance: 10n ** 9n });
    const cancelling = await fundedPayer();
    const emptying = await fundedPayer();
    const soon = BigInt(Math.floor(Date.now() / 1000) + 60);
    const payments = {
      good: await stack.payment(),
      feeFails: await stack.payment({ to: revoking.address }),
      cancelled: await stack.payment({ payerKey: cancelling.privateKey }),
      noFunds: await stack.payment({ payerKey: emptying.privateKey }),
      expired: await stack.payment({ validBefore: soon }),
      alsoGood: await stack.payment(),
    };
    const bodies = Object.fromEntries(Object.entries(payments).map(([k, p]) => [k, p.formA(k === 'feeFails' ? { payTo: revoking.address } : {})]));
    for (const body of Object.values(bodies)) expect((await stack.http.post('/v1/verify').send(body)).status).toBe(200);
    const before = {
      treasury: await devnet.balanceOf(devnet.accounts.treasury.address),
      revoking: await devnet.balanceOf(revoking.address),
      merchant: await devnet.balanceOf(devnet.accounts.merchant.address),
    };

    await provider.send('evm_setAutomine', [false]);
    try {
      const answers = Object.fromEntries(Object.entries(bodies).map(([k, body]) => [k, stack.http.post('/v1/settle').send(body).then((r) => r)]));
      // every settlement placed in a batch whose transaction is at the node
      await waitFor(async () => (await stack.db.prisma.$queryRaw<Array<{ n: bigint }>>`
        SELECT count(*) AS n FROM settlement_batch_items i JOIN chain_transactions t ON t.settlement_id = i.batch_id AND t.purpose = 'settle'
         WHERE t.status = 'broadcast'`)[0].n >= 6n, 'six batched settlements at the node');
      // ahead of our batch in the block (higher tips): the merchant revokes, a payer cancels, another spends its funds
      // (a fixed gas limit: an estimate would run against the pending block, which already holds our batch)
      const tip = { maxPriorityFeePerGas: parseUnits('50', 'gwei'), maxFeePerGas: parseUnits('100', 'gwei'), gasLimit: 200_000n };
      const asMerchant = devnet.usdc.connect(new Wallet(revoking.privateKey, provider)) as unknown as { approve(s: string, v: bigint, o: object): Promise<unknown> };
      await asMerchant.approve(devnet.accounts.treasury.address, 0n, tip);
      const asEmptying = devnet.usdc.connect(new Wallet(emptying.privateKey, provider)) as unknown as { transfer(t: string, v: bigint, o: object): Promise<unknown> };
      await asEmptying.transfer(devnet.accounts.deployer.address, 10n ** 8n, tip);
      await cancelAuthorization(devnet, cancelling.privateKey, payments.cancelled.authorization.nonce, { wait: false, overrides: tip });
      // and the block's time is past the short authorization's validity
      await provider.send('evm_setNextBlockTimestamp', [Number(soon) + 1]);
      await provider.send('evm_mine', []);
      const results = Object.fromEntries(await Promise.all(Object.entries(answers).map(async ([k, r]) => [k, (await r).body] as const)));
      const failure = (k: string) => results[k].error as { code: string; details: Record<string, unknown> };

      // one transaction held several items
      const sizes = await stack.db.prisma.settlementBatch.findMany({ select: { itemCount: true } });
      expect(Math.max(...sizes.map((s) => s.itemCount))).toBeGreaterThanOrEqual(2);

      expect(results.good.success).toBe(true);
      expect(results.alsoGood.success).toBe(true);
      expect(failure('feeFails').code).toBe('insufficient_allowance');
      for (const k of ['cancelled', 'noFunds', 'expired']) {
        expect(failure(k)).toMatchObject({ code: 'settlement_failed', details: { fee_status: 'not_collected', merchant_charged: false, customer_charged: false } });
      }
      expect(failure('cancelled').details.reason).toMatch(/used or canceled/);
      expect(failure('noFunds').details.reason).toMatch(/balance/);
      expect(failure('expired').details.reason).toMatch(/expired/);
      // exactly two fees; the revoking merchant and the failed payments' merchant paid nothing for them
      expect((await devnet.balanceOf(devnet.accounts.treasury.address)) - before.treasury).toBe(2n * FEE);
      expect(await devnet.balanceOf(revoking.address)).toBe(before.revoking);
      expect((await devnet.balanceOf(devnet.accounts.merchant.address)) - before.merchant).toBe(2n * (PRICE_UNITS - FEE));
      for (const k of ['feeFails', 'noFunds', 'expired'] as const) {
        expect(await devnet.usdc.authorizationState(payments[k].authorization.from, payments[k].authorization.nonce)).toBe(false);
      }

      // the public lookup by the batch's transaction answers every payment it settled, and only those
      const [good] = await stack.db.prisma.settlement.findMany({ where: { nonce: payments.good.authorization.nonce.toLowerCase() } });
      const settledByIt = await stack.db.prisma.settlement.findMany({ where: { chainId: 84532, settlementTxHash: good.settlementTxHash } });
      const byTransaction = await stack.http.get('/v1/settlements/lookup').query({ network: 'eip155:84532', transaction: good.settlementTxHash! });
      expect(byTransaction.status).toBe(200);
      const listed = (byTransaction.body.settlements as Array<{ status: string; transaction_hash: string; details: { nonce: string } }>).map((r) => [r.details.nonce, r.status, r.transaction_hash]);
      expect(listed.sort()).toEqual(settledByIt.map((r) => [r.nonce, 'settled', good.settlementTxHash]).sort());
      expect(listed.length).toBe(settledByIt.length);
    } finally {
      await provider.send('evm_setAutomine', [true]);
    }
  }, 90_000);
});

it('settles sequentially, with a warning, when SETTLEMENT_MODE=atomic but the delegation does not match', async () => {
  // a fee other than the executor's: the start-up check refuses the atomic path
  const other = await stack.startWorker({ FEE_AMOUNT: '20000', MIN_PAYMENT_AMOUNT: '0', WORKER_QUEUES: 'maintenance' });
  await waitFor(() => other.lines.some((l) => l.includes('the atomic settlement path is not set up')), 'the fallback warning');
  expect(other.lines.find((l) => l.includes('the atomic settlement path is not set up'))).toContain('fee is 10000');
  await other.stop();
});
