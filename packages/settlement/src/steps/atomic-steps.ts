import { GasCapExceededError, TransactionWouldRevertError, type TransactionOutcome } from '@facilitator/evm-sending';
import type { StoredSettlementBatch } from '@facilitator/db';
import { itemKey, itemOutcomes, type ExecutorItem } from '@facilitator/evm-executor';
import type { AtomicSettlement } from '../atomic/atomic-settlement';
import { ItemRefusedError, NoFundedRelayerError } from '../atomic/executor-batches';
import { executorItemOf } from '../atomic/executor-item';
import { failed, settlementDoomed, transferFailedFeeReturned } from '../failures';
import type { Step, StepContext } from '../step';
import { sendsPermit } from '../payment';
import { beforeFee, collectFee, wouldRevert } from './collect-fee';
import { noFundedRelayer, sequentialPathUnavailable } from '../waiting';
import type { PendingOutcome } from '../outcome-waits';
import { transferExecutionGasCap } from './preflight';
import { executedByNote, executionOf, settledOnExecution, unlessPaidElsewhere } from './settled-elsewhere';
import { type StepResult, staysInState, type StepWait } from '../step-outcome';

/**
 * `collect_fee` on the atomic path: the fee and the transfer are one item of the executor's `settle`,
 * sent in a batch with whatever else is ready. The item either happened whole (fee first, then the
 * transfer) or not at all; its outcome is read from the transaction's logs. A retry after a crash finds
 * the settlement's stored batch and only sends it (same idempotency key) or looks for its outcome; until the
 * batch is mined the settlement's job gives up its slot.
 */
export const collectFeeAndTransfer: Step = async (ctx) => {
  const atomic = atomicOf(ctx);
  let batch = await atomic.batchOf(ctx.settlement.id);
  // the network left the atomic path (its delegation is gone) before this settlement was placed, or a
  // run already sent its fee sequentially, or this worker's executor takes another fee than the settlement's
  // own (a worker configured differently from the one that chose the path): it goes on sequentially, and
  // says so with its next transition; without the treasury key, a fee that differs waits for a worker that
  // can charge it (nothing was sent)
  const feeDiffers = ctx.policy.feeAmount !== ctx.policy.executorFee;
  const feeSent = !batch && (await ctx.chain.transactions.hasAny(ctx.settlement.id, 'fee'));
  if (!batch && (ctx.policy.networkPath !== 'atomic' || feeDiffers || feeSent)) {
    if (feeDiffers && !feeSent) {
      const held = sequentialPathUnavailable(ctx, 'sequential');
      if (held) return held;
    }
    const sequential = await collectFee(ctx);
    return staysInState(sequential) ? sequential : { ...sequential, data: { ...sequential.data, settlementMode: 'sequential' } };
  }
  if (!batch) {
    const balance = await beforeFee(ctx);
    if (typeof balance !== 'bigint') return balance;
    try {
      batch = await atomic.place({ settlementId: ctx.settlement.id, chainId: ctx.network.chainId, ...(await itemOf(ctx)) });
    } catch (error) {
      // every relayer went dry between the check and the batch: nothing was stored or sent, so wait
      if (error instanceof NoFundedRelayerError) return noFundedRelayer(ctx);
      // its batch's estimate failed with it and passed without it: left out, nothing stored or sent for it;
      // unless someone else executed the payment meanwhile (its item fails for that), which paid the merchant
      if (error instanceof ItemRefusedError) return unlessPaidElsewhere(ctx, failed(settlementDoomed(error.reason, { ...error.details, atomic: true }), true));
      throw error;
    }
  }
  let outcome: TransactionOutcome | PendingOutcome;
  try {
    outcome = await atomic.outcome(batch, ctx.network.confirmations);
  } catch (error) {
    const unsendable = await unsendableAlone(ctx, batch, error);
    if (unsendable) return unsendable;
    throw error;
  }
  // the batch is sent: its block is awaited outside this job's slot
  if (outcome.status === 'pending') return { awaiting: outcome };
  return outcomeOfItem(ctx, batch, outcome);
};

/**
 * A batch of this settlement alone (a contract-wallet item) whose estimate now fails, with no transaction
 * ever stored for it: nothing was or can be sent (only this settlement's run sends its batch), so it ends
 * released instead of being retried and parked with its merchant's fee reserved. A batch of several stays
 * as it is: another of its settlements may still send it.
 */
async function unsendableAlone(ctx: StepContext, batch: StoredSettlementBatch, error: unknown): Promise<StepResult | StepWait | undefined> {
  if (batch.itemCount !== 1) return undefined;
  if (!(error instanceof TransactionWouldRevertError) && !(error instanceof GasCapExceededError)) return undefined;
  if (await ctx.chain.transactions.hasAny(batch.id, 'settle')) return undefined;
  const reason = error instanceof TransactionWouldRevertError ? `the settle transaction would revert: ${error.reason}` : error.message;
  return unlessPaidElsewhere(ctx, failed(settlementDoomed(reason, { simulation: 'settle', batch_id: batch.id, atomic: true }), true));
}

// A settlement whose item ran goes to `settled` in one step (settledByItem); these two finish a row a run
// left in `fee_collected` or `executing` on the atomic path (a worker of an earlier version stopped there).

/** `fee_collected` on the atomic path: the transfer ran in the fee's own transaction, already mined. */
export const recordAtomicExecution: Step = async (ctx) => ({
  to: 'executing',
  note: { tx_hash: ctx.settlement.feeTxHash, atomic: true },
});

/** `executing` on the atomic path: settled by the same transaction that collected the fee. */
export const recordAtomicSettlement: Step = async (ctx) => {
  const { feeTxHash, feeCollectedAt } = ctx.settlement;
  if (!feeTxHash) throw new Error(`atomic settlement ${ctx.settlement.id} is executing without its transaction hash`);
  return { to: 'settled', data: { settlementTxHash: feeTxHash, settledAt: settledAfter(feeCollectedAt), merchantPaid: true }, note: { tx_hash: feeTxHash, atomic: true } };
};

/**
 * The spec orders the timestamps; one transaction gives both the fee and the payment, so the settlement's is
 * made the later by construction (even when this clock is behind the fee's time).
 */
function settledAfter(feeCollectedAt: Date | null): Date {
  return new Date(Math.max(Date.now(), (feeCollectedAt?.getTime() ?? 0) + 1));
}

/** The settlement's item, given the fee's and its transfer's gas; a contract-wallet payer's goes alone. */
async function itemOf(ctx: StepContext): Promise<{ item: ExecutorItem; alone: boolean }> {
  // the item's calldata is counted in its envelope (itemEnvelope), so its gas is the execution's alone
  // the payer's approval permit goes first in the item when the payer's allowance is short (read now)
  const withPermit = await sendsPermit(ctx);
  const cap = await transferExecutionGasCap(ctx, withPermit);
  const item = executorItemOf(ctx, ctx.network.gasCaps.fee + cap.gas, withPermit);
  // check_allowance fixes the atomic path only for a payment the executor can run
  if (!item) throw new Error(`settlement ${ctx.settlement.id} took the atomic path with a payment of ${ctx.settlement.mechanism}, which the executor cannot run`);
  return { item, alone: cap.kind === 'contract' };
}

async function outcomeOfItem(ctx: StepContext, batch: StoredSettlementBatch, outcome: TransactionOutcome): Promise<StepResult | StepWait> {
  const batchNote = { batch_id: batch.id, batch_size: batch.itemCount, tx_hash: outcome.hash, block: outcome.blockNumber };
  // the whole transaction reverted (e.g. out of gas): every item of it was undone, nobody paid anything
  if (outcome.status === 'reverted') {
    const result = failed(transferFailedFeeReturned(`settle transaction reverted: ${outcome.reason ?? 'no reason given'}`, outcome.hash), true);
    return { ...result, note: { ...result.note, ...batchNote } };
  }
  const outcomes = itemOutcomes(outcome.logs, ctx.signers.treasury);
  const item = outcomes.get(itemKey(ctx.settlement.payer, ctx.settlement.nonce));
  if (!item) {
    // mined without any executor log: the treasury's code did not run (its delegation was removed or
    // changed after the batch was stored), so nothing of it happened
    if (outcomes.size === 0) {
      const result = failed(transferFailedFeeReturned('the settle transaction ran no settlement executor at the treasury', outcome.hash), true);
      return { ...result, note: { ...result.note, ...batchNote } };
    }
    throw new Error(`settle transaction ${outcome.hash} has no outcome for settlement ${ctx.settlement.id}`);
  }
  if (item.settled) return settledByItem(ctx, outcome.hash, feeTakenBy(ctx, item.toTreasury), batchNote);
  if (item.stage === 'fee') {
    // the fee hash is kept, as for a reverted fee transfer: it counts toward the merchant's pause
    const balance = await ctx.network.usdc.balanceOf(ctx.settlement.merchant);
    const result = await wouldRevert(ctx, item.reason, balance, { feeTxHash: outcome.hash });
    return { ...result, note: { ...result.note, ...batchNote } };
  }
  // someone else executed the authorization first (it was in a public mempool, or the payer sent it): the
  // merchant was paid there, and our item (its fee with it) was undone, so it is settled on theirs with no fee
  const { execution, paidElsewhere, byOurExecutor } = await executionOf(ctx, outcome.hash);
  if (execution && paidElsewhere) {
    return settledOnExecution(ctx, execution.txHash, { ...executedByNote(byOurExecutor, item.reason), fee_collected: false, ...batchNote, our_tx_hash: outcome.hash });
  }
  const result = failed(transferFailedFeeReturned(item.reason, outcome.hash), true);
  return { ...result, note: { ...result.note, ...batchNote } };
}

/**
 * The item ran whole: the fee and the payment happened in one transaction, so the settlement goes from
 * `collect_fee` through `fee_collected` and `executing` to `settled` in one statement (each step keeps its
 * history row), not in three runs of the machine.
 */
function settledByItem(ctx: StepContext, hash: string, taken: bigint | undefined, batchNote: Record<string, unknown>): StepResult {
  const feeCollectedAt = new Date();
  const settledAt = settledAfter(feeCollectedAt);
  // the executor took another fee than the settlement's own: its delegation changed (another FEE_AMOUNT) while
  // this batch was in flight. The money moved; the row records what was taken, so that what the merchant is
  // told is what the chain did, and the transition says so
  const differs = taken !== undefined && taken !== ctx.policy.feeAmount;
  return {
    to: 'settled',
    through: [
      {
        state: 'fee_collected',
        note: { fee_tx_hash: hash, atomic: true, ...batchNote, ...(differs ? { fee_taken_differs: { stored: ctx.policy.feeAmount.toString(), taken: taken.toString() } } : {}) },
      },
      { state: 'executing', note: { tx_hash: hash, atomic: true } },
    ],
    data: {
      feeTxHash: hash,
      feeCollectedAt,
      settlementTxHash: hash,
      settledAt,
      merchantPaid: true,
      ...(differs ? { feeAmount: taken.toString() } : {}),
    },
    note: { tx_hash: hash, atomic: true },
  };
}

/**
 * The merchant's token transfers to the treasury in the item's own logs: the fee the executor took. Undefined
 * when none is found (logs not read): nothing is rewritten on a guess.
 */
function feeTakenBy(ctx: StepContext, toTreasury: Array<{ token: string; from: string; value: bigint }> | undefined): bigint | undefined {
  const token = ctx.network.usdc.tokenAddress.toLowerCase();
  const merchant = ctx.settlement.merchant.toLowerCase();
  const fees = (toTreasury ?? []).filter((t) => t.token === token && t.from === merchant);
  return fees.length === 0 ? undefined : fees.reduce((sum, t) => sum + t.value, 0n);
}

function atomicOf(ctx: StepContext): AtomicSettlement {
  if (!ctx.chain.atomic) throw new Error(`settlement ${ctx.settlement.id} took the atomic path, but this worker has no executor batches`);
  return ctx.chain.atomic;
}
