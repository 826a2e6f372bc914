import type { PaymentReads } from '@facilitator/payment-mechanisms';
import { IntakeFundsCheck, intakeRefusalError, type IntakeFundsReads } from './intake-funds-check';

const TREASURY = '0x' + '4'.repeat(40);
const TOKEN = '0x' + '1'.repeat(40);
const PAYER = '0x' + '2'.repeat(40);
const MERCHANT = '0x' + '3'.repeat(40);

/** A token's balances and allowances, counting the reads made of it. */
function chain(state: { balances: Record<string, bigint>; allowance: bigint; fail?: boolean; nonceUsed?: boolean }) {
  const reads: string[] = [];
  const port: IntakeFundsReads = {
    balanceOf: async (_c, _t, owner) => {
      reads.push(`balanceOf ${owner}`);
      if (state.fail) throw new Error('node down');
      return state.balances[owner] ?? 0n;
    },
    allowance: async (_c, _t, owner, spender) => {
      reads.push(`allowance ${owner} ${spender}`);
      if (state.fail) throw new Error('node down');
      return state.allowance;
    },
    isAuthorizationUsed: async (_c, payer, nonce) => {
      reads.push(`authorizationState ${payer} ${nonce}`);
      if (state.fail) throw new Error('node down');
      return state.nonceUsed ?? false;
    },
    readContract: async () => {
      throw new Error('not asked by EIP-3009');
    },
  };
  return { port, reads, state };
}

const NONCE = '0x' + '5'.repeat(64);
/** an EIP-3009 payment's nonce question, as SettlementRequests asks it (the token's authorizationState) */
const nonceUsed = (reads: PaymentReads) => reads.isAuthorizationUsed(PAYER, NONCE);
const question = { chainId: 84532, token: TOKEN, payer: PAYER, merchant: MERCHANT, amount: 50_000n, fee: 10_000n, nonceUsed };

describe('IntakeFundsCheck', () => {
  it('lets a funded payment in', async () => {
    const c = chain({ balances: { [PAYER]: 50_000n, [MERCHANT]: 10_000n }, allowance: 10_000n });
    expect(await new IntakeFundsCheck(c.port, TREASURY).refusalOf(question)).toBeUndefined();
    expect(c.reads.sort()).toEqual([`allowance ${MERCHANT} ${TREASURY}`, `balanceOf ${MERCHANT}`, `balanceOf ${PAYER}`].sort());
  });

  it("refuses a payer whose balance is below the amount, as the worker's check would", async () => {
    const c = chain({ balances: { [PAYER]: 49_999n, [MERCHANT]: 10_000n }, allowance: 10_000n });
    const failure = await new IntakeFundsCheck(c.port, TREASURY).refusalOf(question);
    expect(failure).toMatchObject({ code: 'settlement_failed', details: { reason: 'payer balance insufficient', payer_balance: '49999', amount: '50000', customer_charged: false } });
    expect(intakeRefusalError(failure!)).toMatchObject({ code: 'settlement_failed', status: 400, details: { checked_at: expect.any(String) } });
  });

  it('never refuses a payment executed already (its nonce is used: the merchant may be paid), whether its payer or its merchant is short', async () => {
    // a front-run of the authorization (anyone holding it may send it, and it pays the merchant): the payer's
    // balance went to the merchant, so it is short of a second amount; the worker answers it paid elsewhere
    const c = chain({ balances: { [PAYER]: 0n, [MERCHANT]: 10_000n }, allowance: 10_000n, nonceUsed: true });
    expect(await new IntakeFundsCheck(c.port, TREASURY).refusalOf(question)).toBeUndefined();
    expect(c.reads).toContain(`authorizationState ${PAYER} ${NONCE}`);
    // nor for a merchant without an allowance: the worker answers it paid elsewhere, no fee taken
    const noAllowance = chain({ balances: { [PAYER]: 50_000n, [MERCHANT]: 10_000n }, allowance: 0n, nonceUsed: true });
    expect(await new IntakeFundsCheck(noAllowance.port, TREASURY).refusalOf(question)).toBeUndefined();
    // a funded payer's payment asks nothing of its nonce (verify asked it)
    const funded = chain({ balances: { [PAYER]: 50_000n, [MERCHANT]: 10_000n }, allowance: 10_000n });
    await new IntakeFundsCheck(funded.port, TREASURY).refusalOf(question);
    expect(funded.reads.filter((r) => r.startsWith('authorizationState'))).toEqual([]);
  });

  it('refuses a merchant whose allowance to the treasury, or whose balance, is below the fee', async () => {
    const noAllowance = chain({ balances: { [PAYER]: 50_000n, [MERCHANT]: 10_000n }, allowance: 9_999n });
    expect(await new IntakeFundsCheck(noAllowance.port, TREASURY).refusalOf(question)).toMatchObject({
      code: 'insufficient_allowance',
      details: { required: '10000', available: '9999', merchant: MERCHANT, treasury: TREASURY, approval_command: expect.any(String) },
    });
    const noBalance = chain({ balances: { [PAYER]: 50_000n, [MERCHANT]: 9_999n }, allowance: 10_000n });
    expect(await new IntakeFundsCheck(noBalance.port, TREASURY).refusalOf(question)).toMatchObject({ code: 'fee_collection_failed', details: { merchant_balance: '9999', required_fee: '10000' } });
  });

  it('asks nothing of the merchant when no fee is charged', async () => {
    const c = chain({ balances: { [PAYER]: 50_000n }, allowance: 0n });
    expect(await new IntakeFundsCheck(c.port, TREASURY).refusalOf({ ...question, fee: 0n })).toBeUndefined();
    expect(c.reads).toEqual([`balanceOf ${PAYER}`]);
  });

  it('lets the payment in when the chain cannot be read (the worker checks again)', async () => {
    const c = chain({ balances: {}, allowance: 0n, fail: true });
    expect(await new IntakeFundsCheck(c.port, TREASURY).refusalOf(question)).toBeUndefined();
  });

  it("reuses a merchant's covering reads for a second, and reads afresh before refusing", async () => {
    const c = chain({ balances: { [PAYER]: 1_000_000n, [MERCHANT]: 1_000_000n }, allowance: 10_000n });
    const check = new IntakeFundsCheck(c.port, TREASURY);
    for (let i = 0; i < 5; i++) expect(await check.refusalOf(question)).toBeUndefined();
    expect(c.reads.filter((r) => r.startsWith('allowance'))).toHaveLength(1);
    // the merchant lowers its allowance: a reused read that covers is kept for its second...
    c.state.allowance = 0n;
    expect(await check.refusalOf(question)).toBeUndefined();
    // ...while a read that does not cover is always read afresh before a refusal
    const other = { ...question, fee: 20_000n };
    expect(await check.refusalOf(other)).toMatchObject({ code: 'insufficient_allowance', details: { available: '0' } });
  });
});
