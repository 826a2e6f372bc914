import { hasExecutorItem } from '../atomic/executor-item';
import type { StepContext } from '../step';

/**
 * Atomic where the network is, except for a payment smaller than the fee (a merchant may set its minimum
 * that low): the executor refuses those, so that no item ever leaves a merchant worse off; except for
 * a settlement whose own fee is not the one the executor takes (FEE_AMOUNT changed between the API that
 * created it and this worker): the executor would charge its fee, not the one the merchant is told; and
 * except for a payment the executor cannot run (it calls only the token's transferWithAuthorization and
 * x402's Permit2 proxies' settle, and upto's proxy only for a payment whose facilitator is the treasury).
 *
 * Asked by check_allowance (which path to reserve for) and by the pre-flight (what it must simulate: on the
 * atomic path a transfer that fails undoes its fee in the same transaction).
 */
export function pathOf(ctx: StepContext): 'atomic' | 'sequential' {
  const executorCanCharge = ctx.policy.feeAmount === ctx.policy.executorFee;
  const executorCanRun = hasExecutorItem(ctx);
  return ctx.policy.networkPath === 'atomic' && executorCanCharge && executorCanRun && BigInt(ctx.settlement.amount) >= ctx.policy.feeAmount ? 'atomic' : 'sequential';
}
