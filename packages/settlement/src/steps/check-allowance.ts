import { approvalCommands } from '../approval-command';
import { failed, insufficientAllowance } from '../failures';
import type { Step } from '../step';

/** `check_allowance`: the merchant's allowance to the treasury must cover the fee. */
export const checkAllowance: Step = async (ctx) => {
  const { merchant } = ctx.settlement;
  const available = await ctx.network.usdc.allowance(merchant, ctx.treasury);
  if (available >= ctx.feeAmount) return { to: 'collect_fee', note: { allowance: available.toString() } };
  const commands = approvalCommands(ctx.network.chainId, ctx.network.usdc.tokenAddress, ctx.treasury, ctx.feeAmount);
  return failed(
    insufficientAllowance({ required: ctx.feeAmount, available, merchant, treasury: ctx.treasury, ...commands }),
    true,
  );
};
