// A payment through Permit2 and x402's exact proxy, step by step: the steps ask its mechanism what they ask
// EIP-3009's token (is the nonce spent, the call to send, what the transaction paid, who executed it).
import { TransactionWouldRevertError } from '@facilitator/evm-sending';
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
  RELAYER_A,
  confirmed,
  moved,
  permit2SettlementFixture,
  settlementFixture,
  stepHarness,
  TOKEN,
  transferLog,
  type StepHarness,
  fakeBlockHash,
} from '../testing/fakes';
import { checkAllowance as checkAllowanceStep } from './check-allowance';
import { confirmTransfer as confirmTransferStep } from './confirm-transfer';
import { preflight as preflightStep } from './preflight';
import { submitTransfer as submitTransferStep } from './submit-transfer';
import { type StepResult, isWait } from '../step-outcome';

const moving = (step: Step) => async (ctx: StepContext): Promise<StepResult> => moved(await step(ctx));
const checkAllowance = moving(checkAllowanceStep);
const confirmTransfer = moving(confirmTransferStep);
const preflight = moving(preflightStep);
const submitTransfer = moving(submitTransferStep);

const PERMIT2 = '0x000000000022d473030f116ddee9f6b43ac78ba3';
const PROXY = '0x402085c248eea27d92e8b30b2c58ed07f9e20001';
const ROUTER = '0x' + '99'.repeat(20);
const FEE_TX_HASH = FakeTransactions.hashOf('stl_1', 'fee');
const TRANSFER_TX_HASH = FakeTransactions.hashOf('stl_1', 'transfer');

/** what the relayer sends: x402ExactPermit2Proxy.settle(permit, owner, witness, signature), as ethers encodes it */
const SETTLE_DATA = new Interface([
  'function settle(((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, address owner, (address to, uint256 validAfter) witness, bytes signature)',
]).encodeFunctionData('settle', [{ permitted: { token: TOKEN, amount: AMOUNT }, nonce: PERMIT2_NONCE, deadline: NOW + 3600 }, PAYER, { to: MERCHANT, validAfter: 0n }, PLAIN_SIGNATURE]);
const NONCE_WORD = new Interface(['function nonceBitmap(address,uint256) view returns (uint256)']).encodeFunctionData('nonceBitmap', [PAYER, PERMIT2_NONCE >> 8n]);
/** the proxy's argument-less event right after the transfer it made */
const SETTLED = { address: PROXY, topics: [id('Settled()')], data: '0x' };

const ALLOWANCE_DATA = new Interface(['function allowance(address,address) view returns (uint256)']).encodeFunctionData('allowance', [PAYER, PERMIT2]);

/** the payer's approval of Permit2 on the token: `amount` */
function approved(h: StepHarness, amount: bigint = AMOUNT): void {
  h.chain.contractAnswers.set(`${TOKEN.toLowerCase()}:${ALLOWANCE_DATA}`, '0x' + amount.toString(16).padStart(64, '0'));
}

/** Permit2's bitmap word with the payment's nonce bit set: used by a transfer, or invalidated by the payer */
function spendNonce(h: StepHarness): void {
  h.chain.contractAnswers.set(`${PERMIT2}:${NONCE_WORD}`, '0x' + (1n << (PERMIT2_NONCE & 0xffn)).toString(16).padStart(64, '0'));
}

/** a transaction of someone else's that moved the amount to the merchant through the proxy */
function mined(h: StepHarness, hash: string, to: string): void {
  h.chain.mined.set(hash, { hash, blockNumber: 99, to, data: SETTLE_DATA, succeeded: true, logs: [{ ...transferLog(PAYER, MERCHANT, AMOUNT), index: 0 }, { ...SETTLED, index: 1 }] });
}

const afterFee = (state: 'fee_collected' | 'executing' = 'fee_collected') => permit2SettlementFixture({ state, feeTxHash: FEE_TX_HASH, feeCollectedAt: new Date(NOW * 1000) });

function details(result: StepResult): Record<string, unknown> {
  expect(result.to).toBe('failed');
  return (result.data?.errorDetails ?? {}) as Record<string, unknown>;
}

describe('a Permit2 payment through the steps', () => {
  it("pre-flight: asks Permit2's nonce bitmap, not the token, and estimates the proxy's settle from a relayer within the transfer cap", async () => {
    const h = stepHarness(permit2SettlementFixture());
    approved(h);
    expect((await preflight(h.ctx)).to).toBe('check_allowance');
    expect(h.log).toContain(`chain.readContract(${PERMIT2})`);
    expect(h.log.some((line) => line.startsWith('chain.isAuthorizationUsed'))).toBe(false);
    expect(h.chain.estimateCalls).toEqual([{ from: RELAYER_A, data: SETTLE_DATA, to: PROXY }]);
  });

  it("pre-flight: fails, nothing sent or estimated, on a chain where x402's exact proxy is missing (a call to it would succeed and move nothing)", async () => {
    const h = stepHarness(permit2SettlementFixture());
    approved(h);
    h.chain.contractAnswers.set(`${PROXY}:0x6afdd850`, '0x');
    expect(details(await preflight(h.ctx))).toMatchObject({
      reason: 'the payment mechanism cannot execute on this chain',
      problem: expect.stringContaining('not deployed'),
      fee_status: 'not_collected',
    });
    expect(h.chain.estimateCalls).toEqual([]);
  });

  it('pre-flight: fails, nothing sent or estimated, when the payer withdrew its approval of Permit2 after verify', async () => {
    const h = stepHarness(permit2SettlementFixture());
    approved(h, AMOUNT - 1n);
    expect(details(await preflight(h.ctx))).toMatchObject({
      reason: 'the payer no longer approves enough for the payment',
      spender: PERMIT2,
      allowance: (AMOUNT - 1n).toString(),
      required: AMOUNT.toString(),
      fee_status: 'not_collected',
    });
    expect(h.chain.estimateCalls).toEqual([]);
  });

  it('pre-flight: fails, nothing sent, when its nonce is spent', async () => {
    const h = stepHarness(permit2SettlementFixture());
    spendNonce(h);
    expect(details(await preflight(h.ctx))).toMatchObject({ reason: 'authorization is used or canceled on chain', fee_status: 'not_collected' });
    expect(h.chain.estimateCalls).toEqual([]);
  });

  it('check_allowance: goes atomic where the network is, as EIP-3009 does (the executor calls the exact proxy: fee and transfer undone together)', async () => {
    const permit2 = stepHarness(permit2SettlementFixture({ state: 'check_allowance' }), { overrides: { networkPath: 'atomic' } });
    expect((await checkAllowance(permit2.ctx)).data).toEqual({ settlementMode: 'atomic' });
    const sequential = stepHarness(permit2SettlementFixture({ state: 'check_allowance' }), { overrides: { networkPath: 'sequential' } });
    expect((await checkAllowance(sequential.ctx)).data).toEqual({ settlementMode: 'sequential' });
    const eip3009 = stepHarness(settlementFixture({ state: 'check_allowance' }), { overrides: { networkPath: 'atomic' } });
    expect((await checkAllowance(eip3009.ctx)).data).toEqual({ settlementMode: 'atomic' });
  });

  it("check_allowance: reserves the payer's payments in flight against its approval of Permit2 when that is below its balance (one approval backs them all)", async () => {
    const h = stepHarness(permit2SettlementFixture({ state: 'check_allowance' }), { accounting: true });
    approved(h, 3n * AMOUNT);
    const result = await checkAllowanceStep(h.ctx);
    expect(result).toMatchObject({ to: 'collect_fee', note: { payer_approval: (3n * AMOUNT).toString(), payer_approved_spender: PERMIT2 } });
    const reservation = (result as { reserveFee?: { request: { payer?: { balance: bigint; value: bigint } } } }).reserveFee!.request.payer!;
    expect(reservation).toMatchObject({ balance: 3n * AMOUNT, value: AMOUNT });

    // an EIP-3009 payment asks for no approval: its balance alone is reserved against
    const eip3009 = stepHarness(settlementFixture({ state: 'check_allowance' }), { accounting: true });
    const plain = (await checkAllowanceStep(eip3009.ctx)) as { note?: Record<string, unknown> };
    expect(plain.note?.payer_approval).toBeUndefined();
  });

  it("check_allowance: a payment that counts its own EIP-2612 permit (the allowance is short) is reserved as the payer's only one in flight", async () => {
    const stored = permit2SettlementFixture().payload as Record<string, unknown>;
    const info = { from: PAYER, asset: TOKEN, spender: PERMIT2, amount: AMOUNT.toString(), nonce: '0', deadline: String(NOW + 3600), signature: PLAIN_SIGNATURE, version: '1' };
    const withPermit = { ...stored, extensions: { eip2612GasSponsoring: { info } } };
    const h = stepHarness(permit2SettlementFixture({ state: 'check_allowance', payload: withPermit }), { accounting: true });
    approved(h, 0n); // the token's nonces(payer) answers 0 (unset): the permit's nonce is its next one
    const result = await checkAllowanceStep(h.ctx);
    const reservation = (result as { reserveFee?: { request: { payer?: { balance: bigint; maxInFlight?: number } } } }).reserveFee!.request.payer!;
    // two permits of one token nonce replace each other: a second payment in flight would count an allowance
    // that the first one's execution spends, and fail after its fee
    expect(reservation).toMatchObject({ balance: AMOUNT, maxInFlight: 1 });
    // with an allowance that suffices, the permit is not sent and nothing limits the payer's payments in flight
    const covered = stepHarness(permit2SettlementFixture({ state: 'check_allowance', payload: withPermit }), { accounting: true });
    approved(covered, 3n * AMOUNT);
    const plain = (await checkAllowanceStep(covered.ctx)) as { reserveFee?: { request: { payer?: { maxInFlight?: number } } } };
    expect(plain.reserveFee!.request.payer!.maxInFlight).toBeUndefined();
  });

  it('check_allowance: in a worker without the treasury key, goes atomic, or waits for the atomic path where the network has none yet (nothing charged)', async () => {
    const atomic = stepHarness(permit2SettlementFixture({ state: 'check_allowance' }), { overrides: { networkPath: 'atomic', treasurySigns: false } });
    expect((await checkAllowance(atomic.ctx)).data).toEqual({ settlementMode: 'atomic' });
    const notReady = stepHarness(permit2SettlementFixture({ state: 'check_allowance' }), { overrides: { networkPath: 'sequential', treasurySigns: false } });
    const result = await checkAllowanceStep(notReady.ctx);
    expect(isWait(result)).toBe(true);
    expect(notReady.transactions.sent).toEqual([]);
  });

  it("submit: sends the proxy's settle from the next relayer, capped as a transfer plus its calldata", async () => {
    const h = stepHarness(afterFee());
    expect(await submitTransfer(h.ctx)).toMatchObject({ to: 'executing', data: { settlementTxHash: TRANSFER_TX_HASH } });
    expect(h.transactions.sent).toEqual([
      { settlementId: 'stl_1', purpose: 'transfer', chainId: 84532, from: RELAYER_A, to: PROXY, data: SETTLE_DATA, gasCap: GAS_CAPS.transfer + calldataGas(SETTLE_DATA) },
    ]);
  });

  it('confirm: settles with what the proxy moved to the merchant, read from the logs', async () => {
    const h = stepHarness(afterFee('executing'));
    h.transactions.seed('stl_1', 'transfer', RELAYER_A);
    h.transactions.outcomes.set('transfer', confirmed([transferLog(PAYER, MERCHANT, AMOUNT), SETTLED]));
    expect(await confirmTransfer(h.ctx)).toMatchObject({ to: 'settled', note: { tx_hash: TRANSFER_TX_HASH, paid: AMOUNT.toString() } });
  });

  it("confirm: a transaction that succeeded and moved less than the amount (a proxy missing on this chain answers any call) is never settled: parked, outcome unknown", async () => {
    for (const logs of [[], [transferLog(PAYER, MERCHANT, AMOUNT - 1n), SETTLED], [transferLog(PAYER, ROUTER, AMOUNT), SETTLED]]) {
      const h = stepHarness(afterFee('executing'));
      h.transactions.seed('stl_1', 'transfer', RELAYER_A);
      h.transactions.outcomes.set('transfer', confirmed(logs));
      await expect(confirmTransferStep(h.ctx)).rejects.toThrow(PaymentOutcomeUnknownError);
    }
  });

  describe('when its transfer could not be sent', () => {
    const wouldRevert = (h: StepHarness) => h.transactions.submitErrors.set('transfer', new TransactionWouldRevertError('InvalidNonce()', undefined));

    it('fails after the fee, fee kept, while its nonce is free: nobody executed it, and nothing more is searched', async () => {
      const h = stepHarness(afterFee());
      wouldRevert(h);
      const d = details(await submitTransfer(h.ctx));
      expect(d).toMatchObject({ reason: 'InvalidNonce()', fee_status: 'collected' });
      expect(d).not.toHaveProperty('authorization_used_by');
      expect(h.log.some((line) => line.startsWith('chain.recentLogs'))).toBe(false);
    });

    it("settles when a stranger's call of the proxy spent its nonce and paid the merchant", async () => {
      const h = stepHarness(afterFee());
      wouldRevert(h);
      spendNonce(h);
      mined(h, '0xstranger', PROXY);
      expect(await submitTransfer(h.ctx)).toEqual({
        to: 'settled',
        data: { settlementTxHash: '0xstranger', settledAt: expect.any(Date), merchantPaid: true, foreignExecution: { txHash: '0xstranger', blockNumber: 99, blockHash: fakeBlockHash(99) } },
        note: { executed_by_third_party: true, tx_hash: '0xstranger', block: 99, confirmations: 3, our_error: 'InvalidNonce()' },
      });
    });

    it('reports neither settled nor failed when a contract reached the proxy with the amount for the merchant: it is parked', async () => {
      const h = stepHarness(afterFee());
      wouldRevert(h);
      spendNonce(h);
      mined(h, '0xrouted', ROUTER);
      await expect(submitTransferStep(h.ctx)).rejects.toThrow(PaymentOutcomeUnknownError);
    });
  });
});
