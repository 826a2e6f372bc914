import { TransactionWouldRevertError } from '@facilitator/chain';
import { failed, feeCollectionFailed } from '../failures';
import type { Step, StepContext, StepResult } from '../step';

/**
 * `collect_fee`: `transferFrom(merchant, treasury, fee)` sent by the treasury. The transaction provider
 * is idempotent per settlement, so a retry after a crash finds the fee already sent and only waits.
 */
export const collectFee: Step = async (ctx) => {
  const sent = await ctx.transactions.find(ctx.settlement.id, 'fee');
  return awaitFee(ctx, sent?.id ?? (await sendFee(ctx)));
};

/** Sends the fee, or returns the failure that makes sending pointless. */
async function sendFee(ctx: StepContext): Promise<string | StepResult> {
  const { merchant } = ctx.settlement;
  const { usdc } = ctx.network;
  const balance = await usdc.balanceOf(merchant);
  if (balance < ctx.feeAmount) {
    return failed(feeCollectionFailed('merchant token balance is below the fee', balance, ctx.feeAmount), true);
  }
  try {
    const tx = await ctx.transactions.submit({
      settlementId: ctx.settlement.id,
      purpose: 'fee',
      chainId: ctx.network.chainId,
      from: ctx.treasury,
      to: usdc.tokenAddress,
      data: usdc.transferFromData(merchant, ctx.treasury, ctx.feeAmount),
    });
    return tx.id;
  } catch (err) {
    if (err instanceof TransactionWouldRevertError) {
      return failed(feeCollectionFailed(err.reason, balance, ctx.feeAmount), true);
    }
    throw err;
  }
}

async function awaitFee(ctx: StepContext, sent: string | StepResult): Promise<StepResult> {
  if (typeof sent !== 'string') return sent;
  const outcome = await ctx.transactions.waitForOutcome(sent, ctx.network.confirmations);
  if (outcome.status === 'confirmed') {
    return { to: 'fee_collected', data: { feeTxHash: outcome.hash, feeCollectedAt: new Date() }, note: { fee_tx_hash: outcome.hash } };
  }
  // a reverted transferFrom moved nothing: the merchant was not charged and may try again
  const balance = await ctx.network.usdc.balanceOf(ctx.settlement.merchant);
  return failed(feeCollectionFailed(outcome.reason ?? 'fee transfer reverted', balance, ctx.feeAmount), true, {
    feeTxHash: outcome.hash,
  });
}
