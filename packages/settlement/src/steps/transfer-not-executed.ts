import { failed, settlementFailedAfterFee } from '../failures';
import type { StepContext } from '../step';
import { executedByNote, executionOf, settledOnExecution } from './settled-elsewhere';
import type { StepResult, StepWait } from '../step-outcome';

/**
 * Our transfer did not happen (it reverted, or could not be sent). If the payment was executed by someone
 * else's transaction (front-running) and that paid the merchant, the payment did settle — say so
 * truthfully, once that transaction has our confirmations (settledOnExecution). Otherwise the settlement
 * failed after the fee: the fee stays collected.
 */
export async function transferNotExecuted(ctx: StepContext, error: string, ourTxHash?: string): Promise<StepResult | StepWait> {
  const { settlement } = ctx;
  const { execution, paidElsewhere, byOurExecutor } = await executionOf(ctx, ourTxHash);
  if (execution && paidElsewhere) return settledOnExecution(ctx, execution.txHash, executedByNote(byOurExecutor, error));
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
