// Who pays for failures (issue #22): the failure pause, the payer's value in flight, the minimum checked
// again, contract-wallet payers on the sequential path and a delegated treasury's fees, step by step.
import { reservationRefusal } from './reservation-refusal';
import type { ReservationRefusalTerms } from '../step-outcome';
import type { PayerInFlight } from '@facilitator/db';
import { OutcomeWaits } from '../outcome-waits';
import type { FeeReverts } from '@facilitator/db';
import { failurePauseOf, type FailureCounts } from '../accounting';
import { FundedRelayers } from '../funded-relayers';
import { SettlementMachine } from '../settlement-machine';
import {
  AMOUNT,
  CHAIN_ID,
  FakeAccounting,
  FakeChain,
  FakeOutbox,
  FakeSettlementStore,
  FakeTransactions,
  FEE,
  MERCHANT,
  networkFixture,
  NOW,
  PAYER,
  RELAYER_A,
  settlementFixture,
  stepHarness,
  TREASURY,
  moved,
  TEST_ADMISSION,
} from '../testing/fakes';
import { SettlementWaitingError } from '../waiting';
import { checkAllowance } from './check-allowance';
import { collectFee } from './collect-fee';
import { transferNotExecuted } from './transfer-not-executed';
import { isWait } from '../step-outcome';
import { SettlementWaitReason } from '../wait-reasons';

/** What the machine answers when the step's fee reservation is refused with `inFlight` (and the payer's in flight). */
function refusedAs(step: { reserveFee?: { refusal: ReservationRefusalTerms } }, inFlight: bigint, payer?: PayerInFlight, nowSeconds = NOW) {
  return reservationRefusal(step.reserveFee!.refusal, inFlight, payer, nowSeconds);
}


const LAST_FAILURE = new Date('2027-01-01T00:00:00Z');
const WINDOW_MS = 3_600_000;

const result = moved;

function failure(r: Parameters<typeof moved>[0]): { code: unknown; details: Record<string, unknown>; released: boolean } {
  const moved = result(r);
  expect(moved.to).toBe('failed');
  return { code: moved.data?.errorCode, details: (moved.data?.errorDetails ?? {}) as Record<string, unknown>, released: moved.data?.paymentKey === null };
}

const checking = (overrides = {}) => settlementFixture({ state: 'check_allowance', ...overrides });

describe('failurePauseOf', () => {
  const counts = (payer: FeeReverts, merchant: FeeReverts, paid = false): FailureCounts & { calls: string[] } => {
    const calls: string[] = [];
    return {
      calls,
      failuresOfPayment: async () => ({ payer, merchant }),
      hasPaid: async () => {
        calls.push('hasPaid');
        return paid;
      },
    };
  };
  const policy = { payerAfterFailures: 3, merchantAfterFailures: 10, windowMs: WINDOW_MS };
  const payment = { payer: PAYER, merchant: MERCHANT, chainId: CHAIN_ID };
  const none = { count: 0, lastAt: null };

  it('pauses the payer from its third failure, until the window after the last one', async () => {
    expect(await failurePauseOf(counts({ count: 2, lastAt: LAST_FAILURE }, none), policy, payment)).toBeUndefined();
    expect(await failurePauseOf(counts({ count: 3, lastAt: LAST_FAILURE }, none), policy, payment)).toEqual({
      who: 'payer',
      until: new Date(LAST_FAILURE.getTime() + WINDOW_MS),
      failures: 3,
    });
  });

  it('pauses a merchant only for payers that never paid it, and asks that only when the merchant is over its threshold', async () => {
    const calm = counts(none, { count: 9, lastAt: LAST_FAILURE });
    expect(await failurePauseOf(calm, policy, payment)).toBeUndefined();
    expect(calm.calls).toEqual([]);
    expect(await failurePauseOf(counts(none, { count: 10, lastAt: LAST_FAILURE }), policy, payment)).toMatchObject({ who: 'merchant', failures: 10 });
    expect(await failurePauseOf(counts(none, { count: 10, lastAt: LAST_FAILURE }, true), policy, payment)).toBeUndefined();
  });
});

describe('checkAllowance with the failure accounting', () => {
  it('refuses a paused payer before reading the chain: settlement_failed with paused_until, nothing charged, payment released', async () => {
    const h = stepHarness(checking(), { accounting: true });
    h.accounting!.payerFailures = { count: 3, lastAt: LAST_FAILURE };
    const f = failure(await checkAllowance(h.ctx));
    expect(f).toMatchObject({ code: 'settlement_failed', released: true });
    expect(f.details).toMatchObject({
      reason: 'payer paused after repeated failures on chain',
      paused: 'payer',
      paused_until: new Date(LAST_FAILURE.getTime() + WINDOW_MS).toISOString(),
      failures_before_pause: 3,
      merchant_charged: false,
      customer_charged: false,
    });
    expect(h.log.filter((call) => call.startsWith('chain.'))).toEqual([]);
    expect(h.transactions.sent).toEqual([]);
  });

  it('refuses, for a merchant over its threshold, a payer that never paid it, and lets one that did through', async () => {
    const stranger = stepHarness(checking(), { accounting: true });
    stranger.accounting!.merchantFailures = { count: 10, lastAt: LAST_FAILURE };
    expect(failure(await checkAllowance(stranger.ctx)).details).toMatchObject({
      reason: 'merchant paused for new payers after repeated failures on chain',
      paused: 'merchant',
    });
    const customer = stepHarness(checking(), { accounting: true });
    customer.accounting!.merchantFailures = { count: 10, lastAt: LAST_FAILURE };
    customer.accounting!.paidBefore = true;
    expect(result(await checkAllowance(customer.ctx)).to).toBe('collect_fee');
  });

  it('checks the merchant\'s current minimum again: raised after verify, the payment fails with verify\'s reason, nothing charged', async () => {
    const h = stepHarness(checking(), { accounting: true });
    h.accounting!.minimum = AMOUNT + 1n;
    const f = failure(await checkAllowance(h.ctx));
    expect(f).toMatchObject({ code: 'settlement_failed', released: true });
    expect(f.details).toMatchObject({ reason: 'amount below minimum', authorization_value: AMOUNT.toString(), minimum_amount: (AMOUNT + 1n).toString() });
    expect(h.log).toContain(`merchants.minimumFor(${MERCHANT})`);
    h.accounting!.minimum = AMOUNT;
    expect(result(await checkAllowance(h.ctx)).to).toBe('collect_fee');
  });

  it('without a merchant minimum or MIN_PAYMENT_AMOUNT, the minimum is the settlement\'s own fee, not the worker\'s FEE_AMOUNT', async () => {
    // the row's fee is above the amount: the API decided a fee the payment does not cover (its FEE_AMOUNT was
    // raised after verify); the worker's own fee (executorFee) is lower and must not be the measure
    const h = stepHarness(checking(), { accounting: true, overrides: { feeAmount: AMOUNT + 1n, executorFee: AMOUNT - 1n } });
    h.accounting!.minimum = undefined;
    expect(failure(await checkAllowance(h.ctx)).details).toMatchObject({ reason: 'amount below minimum', minimum_amount: (AMOUNT + 1n).toString() });
    const covered = stepHarness(checking(), { accounting: true, overrides: { feeAmount: AMOUNT, executorFee: AMOUNT + 1n } });
    covered.accounting!.minimum = undefined;
    expect(result(await checkAllowance(covered.ctx)).to).toBe('collect_fee');
  });

  it('asks to reserve the payment against the payer\'s balance too; a contract-wallet payer is also capped in items', async () => {
    const h = stepHarness(checking(), { accounting: true });
    h.chain.balances.set(PAYER, 5n * AMOUNT);
    const moved = result(await checkAllowance(h.ctx));
    expect(moved.reserveFee?.request.payer).toEqual({
      address: PAYER,
      value: AMOUNT,
      balance: 5n * AMOUNT,
      pause: { afterFailures: 3, since: expect.any(Date) },
    });
    expect(moved.note).toMatchObject({ payer_balance: (5n * AMOUNT).toString(), payer_kind: 'eoa' });

    const contract = stepHarness(checking(), { accounting: true });
    contract.ctx.policy.networkPath = 'atomic';
    contract.chain.withCode.add(PAYER);
    expect(result(await checkAllowance(contract.ctx)).reserveFee?.request.payer).toMatchObject({ maxInFlight: 1 });
  });

  it('fails a payment its payer\'s balance cannot cover even alone, before any reservation: nobody charged', async () => {
    const h = stepHarness(checking(), { accounting: true });
    h.chain.balances.set(PAYER, AMOUNT - 1n);
    const f = failure(await checkAllowance(h.ctx));
    expect(f).toMatchObject({ code: 'settlement_failed', released: true });
    expect(f.details).toMatchObject({ reason: 'payer balance insufficient', payer_balance: (AMOUNT - 1n).toString(), amount: AMOUNT.toString(), merchant_charged: false });
  });

  it('when refused for the payer\'s payments in flight: waits while it would fit alone, fails once the balance cannot cover it', async () => {
    const h = stepHarness(checking(), { accounting: true });
    h.chain.balances.set(PAYER, AMOUNT);
    const refused = refusedAs(result(await checkAllowance(h.ctx)), 0n, { value: AMOUNT, items: 1 });
    expect(isWait(refused) && refused.wait).toEqual({
      reason: SettlementWaitReason.PayerFundsInFlight,
      detail: { payer_balance: AMOUNT.toString(), payer_value_in_flight: AMOUNT.toString(), payer_items_in_flight: 1, amount: AMOUNT.toString() },
    });
    // an authorization about to expire does not wait
    const late = stepHarness(checking(), { accounting: true });
    late.chain.balances.set(PAYER, AMOUNT);
    const expiring = result(await checkAllowance(late.ctx));
    late.ctx.policy.now = () => NOW + 3600;
    expect(failure(refusedAs(expiring, 0n, { value: AMOUNT, items: 1 }, late.ctx.policy.now())).details.reason).toMatch(/authorization expired/);
  });

  it('refused because the payer reached its failures meanwhile (counted under its lock): paused, nothing sent', async () => {
    const h = stepHarness(checking(), { accounting: true });
    const refused = refusedAs(result(await checkAllowance(h.ctx)), 0n, { value: 0n, items: 0, failures: 3, lastFailureAt: LAST_FAILURE });
    expect(failure(refused).details).toMatchObject({
      reason: 'payer paused after repeated failures on chain',
      paused_until: new Date(LAST_FAILURE.getTime() + WINDOW_MS).toISOString(),
      failures_before_pause: 3,
    });
  });

  it('still answers for the merchant\'s fee first: a wait for its fees in flight, or a refusal when the fee does not fit alone', async () => {
    const h = stepHarness(checking(), { accounting: true });
    h.chain.allowanceOf = FEE;
    expect(refusedAs(result(await checkAllowance(h.ctx)), FEE, { value: 0n, items: 0 })).toMatchObject({ wait: { reason: 'merchant_fees_in_flight' } });
    h.chain.allowanceOf = FEE - 1n;
    expect(failure(refusedAs(result(await checkAllowance(h.ctx)), FEE, { value: 0n, items: 0 })).code).toBe('insufficient_allowance');
  });

  it('refuses a contract-wallet payer on the sequential path before the fee; lets it take the atomic path, or the sequential one when allowed', async () => {
    const sequential = stepHarness(checking(), { accounting: true });
    sequential.chain.withCode.add(PAYER);
    const f = failure(await checkAllowance(sequential.ctx));
    expect(f).toMatchObject({ code: 'settlement_failed', released: true });
    expect(f.details).toMatchObject({ reason: 'a contract-wallet payer is settled only on the atomic path', payer_kind: 'contract', fee_status: 'not_collected' });

    const atomic = stepHarness(checking(), { accounting: true });
    atomic.chain.withCode.add(PAYER);
    atomic.ctx.policy.networkPath = 'atomic';
    expect(result(await checkAllowance(atomic.ctx)).data).toEqual({ settlementMode: 'atomic' });

    const allowed = stepHarness(checking(), { accounting: { sequentialContractPayers: 'allow' } });
    allowed.chain.withCode.add(PAYER);
    expect(result(await checkAllowance(allowed.ctx)).data).toEqual({ settlementMode: 'sequential' });
  });
});

describe('collectFee (sequential) with the failure accounting', () => {
  const collecting = () => settlementFixture({ state: 'collect_fee' });

  it('takes no fee ahead of a contract-wallet payer\'s transfer (the network left the atomic path meanwhile)', async () => {
    const h = stepHarness(collecting(), { accounting: true });
    h.chain.withCode.add(PAYER);
    const f = failure(await collectFee(h.ctx));
    expect(f.details).toMatchObject({ reason: 'a contract-wallet payer is settled only on the atomic path', fee_status: 'not_collected' });
    expect(h.transactions.sent).toEqual([]);
  });

  it('a delegated treasury sends one fee at a time: waits while it has a transaction unmined, sends when it has none', async () => {
    const h = stepHarness(collecting(), { accounting: true });
    h.chain.withCode.add(TREASURY);
    h.accounting!.unfinishedTreasuryTransactions = 1;
    const waiting = await collectFee(h.ctx);
    expect(isWait(waiting) && waiting.wait).toEqual({ reason: SettlementWaitReason.TreasuryBusy, detail: { treasury: TREASURY, unfinished_transactions: 1 } });
    expect(h.transactions.sent).toEqual([]);
    h.accounting!.unfinishedTreasuryTransactions = 0;
    expect(result(await collectFee(h.ctx)).to).toBe('fee_collected');
    expect(h.transactions.sent.map((t) => t.purpose)).toEqual(['fee']);
  });

  it('an ordinary treasury is not asked about its transactions in flight', async () => {
    const h = stepHarness(collecting(), { accounting: true });
    h.accounting!.unfinishedTreasuryTransactions = 5;
    expect(result(await collectFee(h.ctx)).to).toBe('fee_collected');
    expect(h.log.filter((call) => call.startsWith('db.unfinishedTransactionsOf'))).toEqual([]);
  });
});

describe('SettlementMachine: a payment the payer\'s balance backs only after its others', () => {
  it('waits in check_allowance (nothing sent, reason shown) instead of failing or sending', async () => {
    const log: string[] = [];
    const store = new FakeSettlementStore(log);
    store.add(settlementFixture({ state: 'check_allowance' }));
    store.payerInFlight = { value: AMOUNT, items: 1 };
    const chain = new FakeChain(log);
    chain.balances.set(PAYER, AMOUNT);
    const transactions = new FakeTransactions(log);
    const machine = new SettlementMachine({
      settlements: store,
      admission: TEST_ADMISSION,
      networks: new Map([[CHAIN_ID, networkFixture(chain)]]),
      transactions,
      outcomes: new OutcomeWaits(transactions),
      treasury: TREASURY,
      relayers: new FundedRelayers([RELAYER_A]),
      executorFee: FEE,
      expiryMarginSeconds: 30,
      outbox: new FakeOutbox(log),
      merchantPause: { afterReverts: 3, windowMs: 600_000 },
      now: () => NOW,
      accounting: new FakeAccounting(log).context(),
    });
    await expect(machine.advance('stl_1')).rejects.toBeInstanceOf(SettlementWaitingError);
    expect(store.rows.get('stl_1')).toMatchObject({ state: 'check_allowance', waitingReason: 'payer_funds_in_flight' });
    expect(transactions.sent).toEqual([]);

    // the other payment settled: the balance read now is what is left, and this one no longer fits
    store.payerInFlight = { value: 0n, items: 0 };
    chain.balances.set(PAYER, 0n);
    await expect(machine.advance('stl_1')).resolves.toBe('failed');
    expect(store.rows.get('stl_1')).toMatchObject({ errorCode: 'settlement_failed', paymentKey: null });
    expect((store.rows.get('stl_1')!.errorDetails as Record<string, unknown>).reason).toBe('payer balance insufficient');
    expect(transactions.sent).toEqual([]);
  });
});

describe('a transaction of our own executor that used the authorization is not a third party\'s', () => {
  const afterFee = () => settlementFixture({ state: 'fee_collected', feeTxHash: '0xfee' });

  it('sequential: settled, reported as executed by our executor (the transaction called our treasury)', async () => {
    const h = stepHarness(afterFee());
    h.chain.authorizationUse = { transactionHash: '0xours', blockNumber: 7, paidToMerchant: AMOUNT, to: TREASURY };
    expect(await transferNotExecuted(h.ctx, 'FiatTokenV2: authorization is used or canceled')).toMatchObject({
      to: 'settled',
      note: { executed_by_our_executor: true, tx_hash: '0xours' },
    });
    const third = stepHarness(afterFee());
    third.chain.authorizationUse = { transactionHash: '0xtheirs', blockNumber: 7, paidToMerchant: AMOUNT, to: '0x9999999999999999999999999999999999999999' };
    expect(((await transferNotExecuted(third.ctx, 'used')) as { note?: unknown }).note).toMatchObject({ executed_by_third_party: true });
  });
});
