import { GasCapExceededError, TransactionWouldRevertError } from '@facilitator/chain-sending';
import { paymentOf } from '../payment';
import type { Step } from '../step';
import { authorizationStillValid, fundedRelayer, waitForGas } from '../waiting';
import { transferGasCap } from './preflight';
import { transferNotExecuted } from './transfer-not-executed';

/**
 * `fee_collected`: submit the payment's direct call (its mechanism's: the token's transferWithAuthorization,
 * or x402's Permit2 proxy) from a relayer with gas. The fee is paid, so the settlement waits (gas above the
 * cap, every relayer dry) rather than fail while it can.
 */
export const submitTransfer: Step = async (ctx) => {
  const { settlement } = ctx;
  const existing = await ctx.transactions.find(settlement.id, 'transfer');
  if (existing) return { to: 'executing', data: { settlementTxHash: existing.hash }, note: { resumed: true } };
  // an expired authorization is not waited for: the submit's estimate refuses it, and that is the answer
  if (authorizationStillValid(ctx)) {
    const gas = await waitForGas(ctx);
    if (gas) return gas;
  }
  const relayer = await fundedRelayer(ctx);
  if (typeof relayer !== 'string') return relayer;
  const { mechanism, parsed } = paymentOf(settlement);
  const call = mechanism.directCall(parsed, ctx.network.usdc);
  try {
    const tx = await ctx.transactions.submit({
      settlementId: settlement.id,
      purpose: 'transfer',
      chainId: ctx.network.chainId,
      from: relayer,
      to: call.to,
      data: call.data,
      gasCap: (await transferGasCap(ctx)).gas,
    });
    return { to: 'executing', data: { settlementTxHash: tx.hash }, note: { tx_hash: tx.hash, relayer: tx.from } };
  } catch (err) {
    if (err instanceof TransactionWouldRevertError) return transferNotExecuted(ctx, err.reason);
    // checked in the pre-flight too; the payer's wallet changed since: nothing was sent for the transfer
    if (err instanceof GasCapExceededError) return transferNotExecuted(ctx, err.message);
    throw err;
  }
};
