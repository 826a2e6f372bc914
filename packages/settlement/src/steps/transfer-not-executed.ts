import { failed, settlementFailedAfterFee } from '../failures';
import { paymentOf } from '../payment';
import { PaymentOutcomeUnknownError } from '../payment-outcome-unknown';
import type { StepContext, StepResult } from '../step';

/**
 * Our transfer did not happen (it reverted, or could not be sent). If the payment was executed by someone
 * else's transaction (front-running) and that paid the merchant, the payment did settle — say so
 * truthfully. Otherwise the settlement failed after the fee: the fee stays collected.
 */
export async function transferNotExecuted(ctx: StepContext, error: string, ourTxHash?: string): Promise<StepResult> {
  const { settlement } = ctx;
  const { execution, paidElsewhere, byOurExecutor } = await executionOf(ctx, ourTxHash);
  if (execution && paidElsewhere) {
    return {
      to: 'settled',
      data: { settlementTxHash: execution.txHash, settledAt: new Date(), merchantPaid: true },
      // our own settlement executor's transaction (an earlier attempt's batch) is not a third party's
      note: byOurExecutor
        ? { executed_by_our_executor: true, tx_hash: execution.txHash, our_error: error }
        : { executed_by_third_party: true, tx_hash: execution.txHash, our_error: error },
    };
  }
  return failed(
    settlementFailedAfterFee({
      reason: error,
      feeAmount: BigInt(settlement.feeAmount),
      feeTxHash: settlement.feeTxHash ?? '',
      settlementError: error,
      customerCharged: false,
      extra: {
        ...(ourTxHash ? { settlement_tx_hash: ourTxHash } : {}),
        ...(execution ? { authorization_used_by: execution.txHash } : {}),
      },
    }),
    false,
    ourTxHash ? { settlementTxHash: ourTxHash } : {},
  );
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
  const found = await mechanism.findExecution(parsed, ctx.network.usdc);
  if (found && 'unattributed' in found) throw new PaymentOutcomeUnknownError(ctx.settlement.id, found.unattributed);
  return {
    execution: found,
    // what this settlement moves (an upto settlement: the merchant's amount, within the signed maximum)
    paidElsewhere: found !== undefined && found.txHash !== ourTxHash && found.paidToPayee >= BigInt(ctx.settlement.amount),
    byOurExecutor: found?.to !== undefined && found.to.toLowerCase() === ctx.treasury.toLowerCase(),
  };
}
