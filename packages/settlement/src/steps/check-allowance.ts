import { approvalCommands } from '../approval-command';
import { failed, feeCollectionFailed, insufficientAllowance, merchantPaused } from '../failures';
import type { Step, StepContext, StepResult } from '../step';

/**
 * `check_allowance`: the merchant's allowance and balance must cover this fee on top of every fee already
 * in flight for it (reserved in Postgres by the transition to collect_fee, across worker processes), so
 * no fee transaction is ever sent that the merchant cannot pay. A merchant whose fee transfers keep
 * reverting is paused for a while instead.
 */
export const checkAllowance: Step = async (ctx) => {
  const paused = await pausedUntil(ctx);
  if (paused) return failed(merchantPaused(paused, ctx.merchantPause.afterReverts), true);
  const { merchant } = ctx.settlement;
  const { usdc } = ctx.network;
  const [allowance, balance] = await Promise.all([usdc.allowance(merchant, ctx.treasury), usdc.balanceOf(merchant)]);
  const request = { merchant, chainId: ctx.network.chainId, tokenAddress: usdc.tokenAddress, fee: ctx.feeAmount, allowance, balance };
  return {
    to: 'collect_fee',
    // the path is fixed here, before any money moves: a worker restarted with another mode finishes it the same way
    data: { settlementMode: pathOf(ctx) },
    note: { allowance: allowance.toString(), balance: balance.toString(), path: pathOf(ctx) },
    reserveFee: { request, refused: (inFlight) => refusal(ctx, allowance, balance, inFlight) },
  };
};

/**
 * Atomic where the network is, except for a payment smaller than the fee (a merchant may set its minimum
 * that low): the executor refuses those, so that no item ever leaves a merchant worse off.
 */
function pathOf(ctx: StepContext): 'atomic' | 'sequential' {
  return ctx.network.settlementMode === 'atomic' && BigInt(ctx.settlement.amount) >= ctx.feeAmount ? 'atomic' : 'sequential';
}

function refusal(ctx: StepContext, allowance: bigint, balance: bigint, inFlight: bigint): StepResult {
  const { merchant } = ctx.settlement;
  if (allowance - inFlight < ctx.feeAmount) {
    const commands = approvalCommands(ctx.network.chainId, ctx.network.usdc.tokenAddress, ctx.treasury, ctx.feeAmount);
    const available = allowance > inFlight ? allowance - inFlight : 0n;
    return failed(
      insufficientAllowance({ required: ctx.feeAmount, available, merchant, treasury: ctx.treasury, ...commands, inFlight }),
      true,
    );
  }
  const spare = balance > inFlight ? balance - inFlight : 0n;
  return failed(feeCollectionFailed('merchant token balance is below the fee', spare, ctx.feeAmount, inFlight), true);
}

/** When the merchant's fee transfers reverted too often lately: until when its settlements pause. */
async function pausedUntil(ctx: StepContext): Promise<Date | undefined> {
  const { afterReverts, windowMs } = ctx.merchantPause;
  const reverts = await ctx.feeRevertsOfMerchant(ctx.settlement.merchant, ctx.network.chainId, new Date(Date.now() - windowMs));
  if (reverts.count < afterReverts || !reverts.lastAt) return undefined;
  return new Date(reverts.lastAt.getTime() + windowMs);
}
