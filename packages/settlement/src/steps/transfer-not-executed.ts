import type { AuthorizationUse } from '@facilitator/chain';
import { authorizationOf } from '../authorization';
import { failed, settlementFailedAfterFee } from '../failures';
import type { StepContext, StepResult } from '../step';

/**
 * Our transfer did not happen (it reverted, or could not be sent). If the authorization was used by
 * someone else's transaction (front-running) and that paid the merchant, the payment did settle — say
 * so truthfully. Otherwise the settlement failed after the fee: the fee stays collected.
 */
export async function transferNotExecuted(ctx: StepContext, error: string, ourTxHash?: string): Promise<StepResult> {
  const { settlement } = ctx;
  const { use, paidElsewhere } = await authorizationUseOf(ctx, ourTxHash);
  if (use && paidElsewhere) {
    return {
      to: 'settled',
      data: { settlementTxHash: use.transactionHash, settledAt: new Date(), merchantPaid: true },
      note: { executed_by_third_party: true, tx_hash: use.transactionHash, our_error: error },
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
        ...(use ? { authorization_used_by: use.transactionHash } : {}),
      },
    }),
    false,
    ourTxHash ? { settlementTxHash: ourTxHash } : {},
  );
}

/**
 * The transaction that used the payer's authorization, if any, and whether it was another than ours and
 * paid the merchant the whole payment (front-running, or the payer sending it itself).
 */
export async function authorizationUseOf(ctx: StepContext, ourTxHash?: string): Promise<{ use?: AuthorizationUse; paidElsewhere: boolean }> {
  const auth = authorizationOf(ctx.settlement);
  const use = await ctx.network.usdc.findAuthorizationUse(auth.from, auth.nonce, auth.to);
  return { use, paidElsewhere: use !== undefined && use.transactionHash !== ourTxHash && use.paidToMerchant >= auth.value };
}
