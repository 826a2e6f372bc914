import type { AuthorizationUse } from '@facilitator/chain-rpc';
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
  const { use, paidElsewhere, byOurExecutor } = await authorizationUseOf(ctx, ourTxHash);
  if (use && paidElsewhere) {
    return {
      to: 'settled',
      data: { settlementTxHash: use.transactionHash, settledAt: new Date(), merchantPaid: true },
      // our own settlement executor's transaction (an earlier attempt's batch) is not a third party's
      note: byOurExecutor
        ? { executed_by_our_executor: true, tx_hash: use.transactionHash, our_error: error }
        : { executed_by_third_party: true, tx_hash: use.transactionHash, our_error: error },
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
 * paid the merchant the whole payment (front-running, or the payer sending it itself). `byOurExecutor`: that
 * transaction called our treasury, i.e. our own settlement executor's `settle` (only our relayers may call
 * it), e.g. the batch of an earlier attempt of the same payment; it is not a third party's.
 */
export async function authorizationUseOf(
  ctx: StepContext,
  ourTxHash?: string,
): Promise<{ use?: AuthorizationUse; paidElsewhere: boolean; byOurExecutor: boolean }> {
  const auth = authorizationOf(ctx.settlement);
  const use = await ctx.network.usdc.findAuthorizationUse(auth.from, auth.nonce, auth.to);
  return {
    use,
    paidElsewhere: use !== undefined && use.transactionHash !== ourTxHash && use.paidToMerchant >= auth.value,
    byOurExecutor: use?.to !== undefined && use.to.toLowerCase() === ctx.treasury.toLowerCase(),
  };
}
