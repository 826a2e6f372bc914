// An upto payment through Permit2, step by step: the row owns the amount the merchant settles (at most the
// signed maximum) and its fee (none below the fee); the call moves exactly that amount and goes from the
// treasury, the only sender the payer's witness names.
import { calldataGas } from '@facilitator/evm-executor';
import { id, Interface } from 'ethers';
import { PaymentOutcomeUnknownError } from '../payment-outcome-unknown';
import type { Step, StepContext } from '../step';
import {
  AMOUNT,
  FakeTransactions,
  GAS_CAPS,
  MERCHANT,
  NOW,
  PAYER,
  PERMIT2_NONCE,
  PLAIN_SIGNATURE,
  TOKEN,
  TREASURY,
  confirmed,
  moved,
  stepHarness,
  transferLog,
  uptoSettlementFixture,
  type StepHarness,
} from '../testing/fakes';
import { checkAllowance as checkAllowanceStep } from './check-allowance';
import { collectFee as collectFeeStep } from './collect-fee';
import { confirmTransfer as confirmTransferStep } from './confirm-transfer';
import { preflight as preflightStep } from './preflight';
import { submitTransfer as submitTransferStep } from './submit-transfer';
import type { StepResult } from '../step-outcome';

const moving = (step: Step) => async (ctx: StepContext): Promise<StepResult> => moved(await step(ctx));
const checkAllowance = moving(checkAllowanceStep);
const collectFee = moving(collectFeeStep);
const confirmTransfer = moving(confirmTransferStep);
const preflight = moving(preflightStep);
const submitTransfer = moving(submitTransferStep);

const PERMIT2 = '0x000000000022d473030f116ddee9f6b43ac78ba3';
const UPTO_PROXY = '0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002';
const PART = AMOUNT / 4n;
const TRANSFER_TX_HASH = FakeTransactions.hashOf('stl_1', 'transfer');

/** x402UptoPermit2Proxy.settle(permit, amount, owner, witness, signature), as ethers encodes it from @x402/evm's ABI */
function settleData(amount: bigint): string {
  return new Interface([
    'function settle(((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, uint256 amount, address owner, (address to, address facilitator, uint256 validAfter) witness, bytes signature)',
  ]).encodeFunctionData('settle', [
    { permitted: { token: TOKEN, amount: AMOUNT }, nonce: PERMIT2_NONCE, deadline: NOW + 3600 },
    amount,
    PAYER,
    { to: MERCHANT, facilitator: TREASURY, validAfter: 0n },
    PLAIN_SIGNATURE,
  ]);
}
const SETTLED = { address: UPTO_PROXY, topics: [id('Settled()')], data: '0x' };
const ALLOWANCE_DATA = new Interface(['function allowance(address,address) view returns (uint256)']).encodeFunctionData('allowance', [PAYER, PERMIT2]);

/** the payer's approval of Permit2 on the token */
function approved(h: StepHarness, amount: bigint): void {
  h.chain.contractAnswers.set(`${TOKEN.toLowerCase()}:${ALLOWANCE_DATA}`, '0x' + amount.toString(16).padStart(64, '0'));
}

function details(result: StepResult): Record<string, unknown> {
  expect(result.to).toBe('failed');
  return (result.data?.errorDetails ?? {}) as Record<string, unknown>;
}

describe('an upto payment through the steps', () => {
  it("pre-flight: estimates the proxy's settle of the row's amount from the treasury, and needs the payer's approval for that amount only", async () => {
    const h = stepHarness(uptoSettlementFixture(PART));
    // approved for less than the maximum and more than what settles: enough
    approved(h, PART);
    expect((await preflight(h.ctx)).to).toBe('check_allowance');
    expect(h.chain.estimateCalls).toEqual([{ from: TREASURY, data: settleData(PART), to: UPTO_PROXY }]);
  });

  it('pre-flight: fails, nothing estimated or sent, when the payer approved less than the amount that settles', async () => {
    const h = stepHarness(uptoSettlementFixture(PART));
    approved(h, PART - 1n);
    expect(details(await preflight(h.ctx))).toMatchObject({ reason: 'the payer no longer approves enough for the payment', required: PART.toString(), fee_status: 'not_collected' });
    expect(h.chain.estimateCalls).toEqual([]);
  });

  it('pre-flight: fails before any fee when the witness names another facilitator than our treasury (the proxy would revert our call)', async () => {
    const h = stepHarness(uptoSettlementFixture(PART), { overrides: { treasury: '0x' + '99'.repeat(20) } });
    approved(h, AMOUNT);
    expect(details(await preflight(h.ctx))).toMatchObject({
      reason: 'the payment may be executed only by another facilitator address than this service',
      facilitator: TREASURY,
      fee_status: 'not_collected',
    });
    expect(h.chain.estimateCalls).toEqual([]);
  });

  it("check_allowance in a worker without the treasury key: the executor's item sends as the treasury; a row with no fee (sequential only) fails at once, nothing sent", async () => {
    const keyless = { overrides: { treasurySigns: false, networkPath: 'atomic' as const } };
    const charged = stepHarness(uptoSettlementFixture(PART, { state: 'check_allowance' }), keyless);
    expect((await checkAllowance(charged.ctx)).data).toEqual({ settlementMode: 'atomic' });
    const free = stepHarness(uptoSettlementFixture(9_999n, { state: 'check_allowance', feeAmount: '0' }), keyless);
    expect(details(await checkAllowance(free.ctx))).toMatchObject({
      reason: expect.stringContaining('a settlement charged no fee settles only on the sequential path'),
      fee_status: 'not_collected',
    });
    expect(free.transactions.sent).toEqual([]);
    // with the key, the same row goes sequential: the executor cannot settle without its fee
    const withKey = stepHarness(uptoSettlementFixture(9_999n, { state: 'check_allowance', feeAmount: '0' }), { overrides: { networkPath: 'atomic' } });
    expect((await checkAllowance(withKey.ctx)).data).toEqual({ settlementMode: 'sequential' });
  });

  it('collect_fee: a row with no fee (an amount below the fee) sends nothing and moves on, once it has claimed the right to send', async () => {
    const h = stepHarness(uptoSettlementFixture(9_999n, { state: 'collect_fee', feeAmount: '0' }));
    expect(await collectFee(h.ctx)).toMatchObject({ to: 'fee_collected', note: { fee: '0' } });
    expect(h.transactions.sent).toEqual([]);
    expect(h.log).toContain('db.claimSend');
    // a row with a fee sends it, as ever
    const charged = stepHarness(uptoSettlementFixture(PART, { state: 'collect_fee' }));
    await collectFeeStep(charged.ctx);
    expect(charged.transactions.sent.map((tx) => [tx.purpose, tx.from])).toEqual([['fee', TREASURY]]);
  });

  it("submit: sends the proxy's settle of the row's amount from the treasury, capped as a transfer plus its calldata", async () => {
    const h = stepHarness(uptoSettlementFixture(PART, { state: 'fee_collected' }));
    expect(await submitTransfer(h.ctx)).toMatchObject({ to: 'executing', data: { settlementTxHash: TRANSFER_TX_HASH } });
    expect(h.transactions.sent).toEqual([
      { settlementId: 'stl_1', purpose: 'transfer', chainId: 84532, from: TREASURY, to: UPTO_PROXY, data: settleData(PART), gasCap: GAS_CAPS.transfer + calldataGas(settleData(PART)) },
    ]);
  });

  it("confirm: settled when the logs show the row's amount moved to the merchant; less is parked, never settled", async () => {
    const h = stepHarness(uptoSettlementFixture(PART, { state: 'executing' }));
    h.transactions.seed('stl_1', 'transfer', TREASURY);
    h.transactions.outcomes.set('transfer', confirmed([transferLog(PAYER, MERCHANT, PART), SETTLED]));
    expect(await confirmTransfer(h.ctx)).toMatchObject({ to: 'settled', note: { paid: PART.toString() } });

    const short = stepHarness(uptoSettlementFixture(PART, { state: 'executing' }));
    short.transactions.seed('stl_1', 'transfer', TREASURY);
    short.transactions.outcomes.set('transfer', confirmed([transferLog(PAYER, MERCHANT, PART - 1n), SETTLED]));
    await expect(confirmTransferStep(short.ctx)).rejects.toThrow(PaymentOutcomeUnknownError);
  });
});
