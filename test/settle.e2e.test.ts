import { Wallet } from 'ethers';
import { balances, cancelAuthorization, difference, newMerchant } from './support/chain-actions';
import { PRICE_UNITS, startTestStack, TestStack, TRANSACTION_PROVIDER } from './support/test-stack';
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

async function verified(fields: Parameters<TestStack['payment']>[0] = {}, requirements: Record<string, unknown> = {}) {
  const p = await stack.payment(fields);
  const res = await stack.http.post('/v1/verify').send(p.formA(requirements));
  expect(res.status).toBe(200);
  return { p, verificationId: res.body.details.verification_id as string, body: p.formA(requirements) };
}

describe('POST /v1/settle, Form A', () => {
  it('collects the fee first, then moves the payment: payer -value, merchant +value -fee, treasury +fee', async () => {
    const { body, verificationId } = await verified();
    const before = await balances(stack.devnet);
    const res = await stack.http.post('/v1/settle').send(body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      transaction: null,
      message: 'Payment settled',
      details: {
        settlement_id: expect.stringMatching(/^stl_[0-9a-f]{32}$/),
        verification_id: verificationId,
        settled_amount: PRICE_UNITS.toString(),
        merchant_received: Number(PRICE_UNITS),
        fee_amount_wei: 10000,
        fee_collection_status: 'collected',
        fee_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        settlement_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        fee_collected_first: true,
        pricing_model: 'flat_rate',
        description: expect.any(String),
        fee_collection_timestamp: expect.any(String),
        settlement_timestamp: expect.any(String),
      },
    });
    const d = res.body.details;
    expect(new Date(d.fee_collection_timestamp).getTime()).toBeLessThanOrEqual(new Date(d.settlement_timestamp).getTime());
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE_UNITS, merchant: PRICE_UNITS - FEE, treasury: FEE });

    // the fee was mined before the transfer
    const [fee, transfer] = await Promise.all([
      stack.devnet.provider.getTransactionReceipt(d.fee_tx_hash),
      stack.devnet.provider.getTransactionReceipt(d.settlement_tx_hash),
    ]);
    expect(fee!.blockNumber < transfer!.blockNumber || (fee!.blockNumber === transfer!.blockNumber && fee!.index < transfer!.index)).toBe(true);

    const history = await stack.db.prisma.settlementTransition.findMany({ where: { settlementId: d.settlement_id }, orderBy: { id: 'asc' } });
    expect(history.map((h) => h.toState)).toEqual(['pending', 'check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);
    // sent by the provider under test (npm run test:openzeppelin-relayer runs this suite through the relayer server)
    const sent = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: d.settlement_id }, orderBy: { purpose: 'asc' } });
    expect(sent.map((t) => [t.purpose, t.provider, t.providerTransactionId !== null])).toEqual([
      ['fee', TRANSACTION_PROVIDER, TRANSACTION_PROVIDER !== 'local'],
      ['transfer', TRANSACTION_PROVIDER, TRANSACTION_PROVIDER !== 'local'],
    ]);

    const status = await stack.http.get(`/v1/settlements/${d.settlement_id}`);
    expect(status.body).toMatchObject({
      id: d.settlement_id,
      type: 'settlement',
      status: 'settled',
      state: 'settled',
      transaction_hash: d.settlement_tx_hash,
      details: {
        verification_id: verificationId,
        destination_address: stack.devnet.accounts.merchant.address.toLowerCase(),
        settled_amount: PRICE_UNITS.toString(),
        fee_collection_status: 'collected',
        fee_tx_hash: d.fee_tx_hash,
      },
    });
    // the verification's status record now points at the settling transaction
    expect((await stack.http.get(`/v1/verifications/${verificationId}`)).body.transaction_hash).toBe(d.settlement_tx_hash);
  });

  it('is 404 for a payment that was never verified', async () => {
    const p = await stack.payment();
    const res = await stack.http.post('/v1/settle').send(p.formA());
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('is 404 when the requirements differ from the verified ones', async () => {
    const { p } = await verified();
    const res = await stack.http.post('/v1/settle').send(p.formA({ price: '$0.02' }));
    expect(res.status).toBe(404);
  });

  it('settling again returns the same settlement and charges nothing more', async () => {
    const { body } = await verified();
    const first = await stack.http.post('/v1/settle').send(body);
    const before = await balances(stack.devnet);
    const again = await stack.http.post('/v1/settle').send(body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
  });

  it('50 concurrent settles of one payment make one settlement, one fee and one transfer', async () => {
    const { body, p } = await verified();
    const before = await balances(stack.devnet);
    const answers = await Promise.all(Array.from({ length: 50 }, () => stack.http.post('/v1/settle').send(body)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.body.details.settlement_id)).size).toBe(1);
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE_UNITS, merchant: PRICE_UNITS - FEE, treasury: FEE });
    const nonce = p.authorization.nonce.toLowerCase();
    expect(await stack.db.prisma.settlement.count({ where: { nonce } })).toBe(1);
    const settlementId = answers[0].body.details.settlement_id;
    expect(await stack.db.prisma.chainTransaction.count({ where: { settlementId } })).toBe(2);
  });

  it('a settled nonce can no longer be verified', async () => {
    const { body } = await verified();
    expect((await stack.http.post('/v1/settle').send(body)).status).toBe(200);
    const res = await stack.http.post('/v1/verify').send(body);
    expect(res.body.error.message).toBe('nonce already used');
  });
});

describe('settlement failures, with nothing charged that should not be', () => {
  it('no allowance: 400 insufficient_allowance, nothing moves; after approving, a new attempt settles', async () => {
    const merchant = await newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 0n });
    const { body } = await verified({ to: merchant.address }, { payTo: merchant.address });
    const before = await balances(stack.devnet, merchant.address);
    const res = await stack.http.post('/v1/settle').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'insufficient_allowance',
      message: 'merchant allowance to the treasury is below the settlement fee',
      details: {
        required: '10000',
        available: '0',
        merchant: merchant.address.toLowerCase(),
        treasury: stack.devnet.accounts.treasury.address.toLowerCase(),
        approval_command: `facilitator approve --network eip155:84532 --treasury ${stack.devnet.accounts.treasury.address.toLowerCase()} --settlements 100`,
        approval_command_cast: expect.stringContaining(`cast send ${stack.devnet.token.toLowerCase()} "approve(address,uint256)"`),
        timing: expect.any(String),
        impact: expect.any(String),
        // refused at the settle request, from the chain's allowance, before a settlement was stored (issue 41)
        checked_at: expect.any(String),
      },
    });
    expect(await stack.db.prisma.settlement.count({ where: { merchant: merchant.address.toLowerCase() } })).toBe(0);
    expect(difference(await balances(stack.devnet, merchant.address), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });

    await stack.devnet.approveTreasury(merchant.privateKey, 1_000_000n);
    const retry = await stack.http.post('/v1/settle').send(body);
    expect(retry.status).toBe(200);
    expect(retry.body.details.settlement_id).toMatch(/^stl_/);
    expect(difference(await balances(stack.devnet, merchant.address), before)).toEqual({ payer: -PRICE_UNITS, merchant: PRICE_UNITS - FEE, treasury: FEE });
  });

  it('allowance but no balance for the fee: 400 fee_collection_failed, nothing moves', async () => {
    const merchant = await newMerchant(stack.devnet, { balance: 0n, allowance: 1_000_000n });
    const { body } = await verified({ to: merchant.address }, { payTo: merchant.address });
    const before = await balances(stack.devnet, merchant.address);
    const res = await stack.http.post('/v1/settle').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'fee_collection_failed',
      details: { reason: expect.any(String), merchant_balance: '0', required_fee: '10000' },
    });
    expect(difference(await balances(stack.devnet, merchant.address), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
  });

  it('an authorization cancelled before settle is caught by the pre-flight check: no fee, nobody charged', async () => {
    const { body, p } = await verified();
    await cancelAuthorization(stack.devnet, stack.devnet.accounts.payer.privateKey, p.authorization.nonce);
    const before = await balances(stack.devnet);
    const res = await stack.http.post('/v1/settle').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'settlement_failed',
      details: { fee_status: 'not_collected', merchant_charged: false, customer_charged: false },
    });
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
  });
});

describe('POST /v1/settle, Form B', () => {
  it('answers pending at once, then the status record reaches settled', async () => {
    const p = await stack.payment();
    const v = await stack.http.post('/v1/verify').send(p.formB({ webhook_url: 'http://127.0.0.1:9/hook' }));
    const before = await balances(stack.devnet);
    const res = await stack.http
      .post('/v1/settle')
      .send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      settlement_id: expect.stringMatching(/^stl_/),
      verification_id: v.body.verification_id,
      status: 'pending',
      transaction_hash: null,
      destination_address: stack.devnet.accounts.merchant.address.toLowerCase(),
      created_at: expect.any(String),
    });
    let status;
    for (let i = 0; i < 100; i++) {
      status = await stack.http.get(`/v1/settlements/${res.body.settlement_id}`);
      if (status.body.status !== 'pending') break;
      await sleep(100);
    }
    expect(status!.body.status).toBe('settled');
    expect(status!.body.transaction_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE_UNITS, merchant: PRICE_UNITS - FEE, treasury: FEE });
    const events = await stack.db.prisma.webhookEvent.findMany({ where: { settlementId: res.body.settlement_id } });
    expect(events.map((e) => e.eventType)).toEqual(['settlement.completed']);
    expect(events[0].payload).toMatchObject({
      status: 'settled',
      settlement_id: res.body.settlement_id,
      data: { settlement_tx_hash: status!.body.transaction_hash, settled_amount: '10000', fee: '10000' },
    });
  });

  it('refuses a destination other than the verified merchant', async () => {
    const p = await stack.payment();
    const v = await stack.http.post('/v1/verify').send(p.formB());
    const res = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: Wallet.createRandom().address });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  it('is 404 for an unknown verification', async () => {
    const res = await stack.http.post('/v1/settle').send({ verification_id: 'ver_' + '0'.repeat(32), destination_address: stack.devnet.accounts.merchant.address });
    expect(res.status).toBe(404);
  });
});
