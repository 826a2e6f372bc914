import { evmExecutionOf, withOurExecutor } from '@facilitator/payment-mechanisms';
import { paymentOf } from '../payment';
import { PaymentOutcomeUnknownError } from '../payment-outcome-unknown';
import type { StepContext } from '../step';
import type { StepResult, StepWait } from '../step-outcome';
import { SettlementWaitReason } from '../wait-reasons';

/**
 * The payment was executed to its merchant, for at least the settlement's amount, by a transaction that is not
 * this settlement's own: someone else's (a front-run, the payer's wallet sending it twice, a merchant failing
 * over between facilitators) or a batch of an earlier attempt. The customer was charged and the merchant paid,
 * whoever sent it, so the settlement is `settled` on that transaction, and every surface answers it as paid
 * (x402 `success: true` with that hash, Form A `settled`): a buyer who paid is never refused.
 *
 * Never at fewer confirmations than ours would need (CONFIRMATIONS_<chainId>): until then it waits
 * (`execution_confirming`, nothing sent). The transaction's block is stored with the transition
 * (settlement_foreign_executions) and the finality watcher watches it as it watches ours: a reorg that removes
 * it is told to the merchant (docs/decisions.md, "Paid by another transaction").
 */
export async function settledOnExecution(ctx: StepContext, txHash: string, note: Record<string, unknown>): Promise<StepResult | StepWait> {
  const usdc = ctx.network.usdc;
  const [mined, head] = await Promise.all([usdc.minedTransaction(txHash), usdc.head()]);
  const required = ctx.network.confirmations;
  const confirmations = mined ? Math.max(0, head - mined.blockNumber + 1) : 0;
  // a receipt without its block's hash cannot be watched for a reorg: not reported until one has it
  if (!mined || mined.blockHash === undefined || confirmations < required) {
    return {
      wait: {
        reason: SettlementWaitReason.ExecutionConfirming,
        detail: { tx_hash: txHash, block: mined?.blockNumber ?? null, confirmations, required },
      },
    };
  }
  return {
    to: 'settled',
    data: {
      settlementTxHash: txHash,
      settledAt: new Date(),
      merchantPaid: true,
      foreignExecution: { txHash, blockNumber: mined.blockNumber, blockHash: mined.blockHash },
    },
    note: { ...note, tx_hash: txHash, block: mined.blockNumber, confirmations },
  };
}

/**
 * A failure found before anything of ours moved money (the pre-flight, a batch's estimate) that may be the
 * payment executed already: when another transaction paid the merchant for it, the settlement is settled on
 * that one (settledOnExecution), else it ends as `otherwise` says. Asked only on these failure paths: an
 * honest settlement costs no extra read.
 */
export async function unlessPaidElsewhere(ctx: StepContext, otherwise: StepResult, ourTxHash?: string): Promise<StepResult | StepWait> {
  const { execution, paidElsewhere, byOurExecutor } = await executionOf(ctx, ourTxHash);
  if (!execution || !paidElsewhere) return otherwise;
  const reason = typeof otherwise.data?.errorMessage === 'string' ? otherwise.data.errorMessage : 'our transaction could not execute the payment';
  return settledOnExecution(ctx, execution.txHash, { ...executedByNote(byOurExecutor, reason), ...(ourTxHash ? { our_tx_hash: ourTxHash } : {}) });
}

/** Whose transaction paid: our own settlement executor's (an earlier attempt's batch) is not a third party's. */
export function executedByNote(byOurExecutor: boolean, ourError: string): Record<string, unknown> {
  return byOurExecutor ? { executed_by_our_executor: true, our_error: ourError } : { executed_by_third_party: true, our_error: ourError };
}

/**
 * The transaction that executed the payment (its mechanism's findExecution), if any, and whether it was
 * another than ours and paid the merchant the whole payment (front-running, or the payer sending it itself).
 * `byOurExecutor`: that transaction called our treasury, i.e. our own settlement executor's `settle` (only
 * our relayers may call it), e.g. the batch of an earlier attempt of the same payment; it is not a third
 * party's. An execution the chain cannot attribute throws PaymentOutcomeUnknownError: the settlement is
 * parked, as neither "paid" nor "failed" can be told.
 */
export async function executionOf(
  ctx: StepContext,
  ourTxHash?: string,
): Promise<{ execution?: { txHash: string; to?: string }; paidElsewhere: boolean; byOurExecutor: boolean }> {
  const { mechanism, parsed } = paymentOf(ctx.settlement);
  // our own executor's batches are told by their per-item logs, not taken for a stranger's contract
  const found = await evmExecutionOf(mechanism).findExecution(parsed, withOurExecutor(ctx.network.usdc, ctx.signers.treasury));
  if (found && 'unattributed' in found) throw new PaymentOutcomeUnknownError(ctx.settlement.id, found.unattributed);
  return {
    execution: found,
    // what this settlement moves (an upto settlement: the merchant's amount, within the signed maximum)
    paidElsewhere: found !== undefined && found.txHash !== ourTxHash && found.paidToPayee >= BigInt(ctx.settlement.amount),
    byOurExecutor: found?.to !== undefined && found.to.toLowerCase() === ctx.signers.treasury.toLowerCase(),
  };
}
