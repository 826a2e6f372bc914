// Issue 25, item 3: a settlement owns its fee. The API stores it on the row when the settlement is created;
// every step reserves, charges and reports that amount, whatever the worker's own FEE_AMOUNT is. A worker
// whose executor takes another fee never puts such a settlement in a batch: it charges the row's fee
// sequentially when it holds the treasury's key, and otherwise waits (nothing sent) for a worker that can.
// (The machine's own wiring, the row's fee into the step context, is shown by settlement-machine.test.ts.)
import type { TransactionOutcome } from '@facilitator/evm-sending';
import type { StoredSettlementBatch } from '@facilitator/db';
import type { AtomicItemRequest, AtomicSettlement } from '../atomic/atomic-settlement';
import { FEE, MERCHANT, moved, NOW, settlementFixture, stepHarness, TREASURY, transferFromCalldata, type StepHarness } from '../testing/fakes';
import { collectFeeAndTransfer } from './atomic-steps';
import { checkAllowance } from './check-allowance';
import { collectFee } from './collect-fee';
import { isWait } from '../step-outcome';
import { SettlementWaitReason } from '../wait-reasons';

/** The fee the API stored on the row: not the worker's FEE_AMOUNT (FEE, its executor's fee). */
const ROW_FEE = 7_000n;

class RecordingAtomic implements AtomicSettlement {
  placed: AtomicItemRequest[] = [];
  async batchOf(): Promise<StoredSettlementBatch | null> {
    return null;
  }
  async place(request: AtomicItemRequest): Promise<StoredSettlementBatch> {
    this.placed.push(request);
    throw new Error('a settlement whose fee the executor does not take must never be placed in a batch');
  }
  async outcome(): Promise<TransactionOutcome> {
    throw new Error('not sent');
  }
}

function harness(state: 'check_allowance' | 'collect_fee', options: { treasurySigns: boolean; rowFee?: bigint; validBefore?: number }) {
  const settlement = settlementFixture(
    { state, feeAmount: (options.rowFee ?? ROW_FEE).toString(), ...(state === 'collect_fee' ? { settlementMode: 'atomic' as const } : {}) },
    options.validBefore === undefined ? {} : { validBefore: String(options.validBefore) },
  );
  const atomic = new RecordingAtomic();
  const h = stepHarness(settlement, { overrides: { treasurySigns: options.treasurySigns, atomic } });
  h.ctx.policy.networkPath = 'atomic';
  return { h, atomic };
}

const nothingSent = (h: StepHarness) => {
  expect(h.transactions.sent).toEqual([]);
  expect(h.log.filter((call) => call.startsWith('tx.submit'))).toEqual([]);
};

const asResult = moved;

describe('the fee a settlement is charged is the one stored on its row', () => {
  it('check_allowance reserves the row fee and fixes the sequential path when the executor takes another fee', async () => {
    const { h } = harness('check_allowance', { treasurySigns: true });
    const result = asResult(await checkAllowance(h.ctx));
    expect(result.to).toBe('collect_fee');
    expect(result.data).toEqual({ settlementMode: 'sequential' });
    expect(result.reserveFee?.request.fee).toBe(ROW_FEE);
  });

  it('check_allowance keeps the atomic path when the row fee is the executor fee', async () => {
    const { h } = harness('check_allowance', { treasurySigns: false, rowFee: FEE });
    const result = asResult(await checkAllowance(h.ctx));
    expect(result.data).toEqual({ settlementMode: 'atomic' });
    expect(result.reserveFee?.request.fee).toBe(FEE);
  });

  it('the sequential fee transfer takes exactly the row fee', async () => {
    const { h } = harness('collect_fee', { treasurySigns: true });
    h.ctx.settlement = { ...h.ctx.settlement, settlementMode: 'sequential' };
    await collectFee(h.ctx);
    expect(h.transactions.sent).toHaveLength(1);
    expect(h.transactions.sent[0]).toMatchObject({ purpose: 'fee', from: TREASURY, data: transferFromCalldata(MERCHANT, TREASURY, ROW_FEE) });
  });

  it('a worker without the treasury key waits at check_allowance, nothing read from the chain, reserved or sent', async () => {
    const { h } = harness('check_allowance', { treasurySigns: false });
    const result = await checkAllowance(h.ctx);
    expect(result).toEqual({
      wait: { reason: SettlementWaitReason.FeeDiffersFromExecutor, detail: { network: 'eip155:84532', fee_amount: ROW_FEE.toString(), executor_fee: FEE.toString() } },
    });
    expect(h.log.filter((call) => call.startsWith('chain.'))).toEqual([]);
    nothingSent(h);
  });

  it('that wait never outlives the authorization: it then fails with nothing charged', async () => {
    const { h } = harness('check_allowance', { treasurySigns: false, validBefore: NOW + 10 });
    const result = asResult(await checkAllowance(h.ctx));
    expect(result.to).toBe('failed');
    expect(result.data?.errorDetails).toMatchObject({ fee_amount: ROW_FEE.toString(), executor_fee: FEE.toString(), path: 'sequential' });
    expect(String((result.data?.errorDetails as { reason: string }).reason)).toMatch(/no worker could charge the settlement's fee/);
    nothingSent(h);
  });

  describe('a settlement fixed on the atomic path by a worker configured with its fee, run by one configured with another', () => {
    it('is never placed in a batch; without the treasury key it waits, nothing sent', async () => {
      const { h, atomic } = harness('collect_fee', { treasurySigns: false });
      const result = await collectFeeAndTransfer(h.ctx);
      expect(isWait(result) && result.wait.reason).toBe(SettlementWaitReason.FeeDiffersFromExecutor);
      expect(atomic.placed).toEqual([]);
      nothingSent(h);
    });

    it('with the treasury key it is charged the row fee sequentially, and says it changed path', async () => {
      const { h, atomic } = harness('collect_fee', { treasurySigns: true });
      const result = asResult(await collectFeeAndTransfer(h.ctx));
      expect(atomic.placed).toEqual([]);
      expect(h.transactions.sent.map((tx) => tx.data)).toEqual([transferFromCalldata(MERCHANT, TREASURY, ROW_FEE)]);
      expect(result).toMatchObject({ to: 'fee_collected', data: { settlementMode: 'sequential' } });
    });
  });
});
