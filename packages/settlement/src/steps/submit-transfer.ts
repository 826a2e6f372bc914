import { GasCapExceededError, TransactionWouldRevertError } from '@facilitator/evm-sending';
import { directCallOf, sendsPermit } from '../payment';
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
  const existing = await ctx.chain.transactions.find(settlement.id, 'transfer');
  if (existing) return { to: 'executing', data: { settlementTxHash: existing.hash }, note: { resumed: true } };
  // an expired authorization is not waited for: the submit's estimate refuses it, and that is the answer
  if (authorizationStillValid(ctx)) {
    const gas = await waitForGas(ctx);
    if (gas) return gas;
  }
  // with the payer's approval permit when its allowance is short (read now), as the pre-flight estimated it
  const withPermit = await sendsPermit(ctx);
  const call = directCallOf(settlement, ctx.network.usdc, withPermit);
  // a call with one sender (upto's facilitator) goes from the treasury's key, as the pre-flight checked
  const sender = call.sender ?? (await fundedRelayer(ctx));
  if (typeof sender !== 'string') return sender;
  if (call.sender !== undefined && (call.sender !== ctx.signers.treasury.toLowerCase() || !ctx.signers.treasurySigns)) {
    return transferNotExecuted(ctx, `the payment may be executed only by ${call.sender}, which this worker cannot send from`);
  }
  const withheld = await transferWithheld(ctx);
  if (withheld) return withheld;
  try {
    const tx = await ctx.chain.transactions.submit({
      settlementId: settlement.id,
      purpose: 'transfer',
      chainId: ctx.network.chainId,
      from: sender,
      to: call.to,
      data: call.data,
      gasCap: (await transferGasCap(ctx, call, withPermit)).gas,
    });
    return { to: 'executing', data: { settlementTxHash: tx.hash }, note: { tx_hash: tx.hash, relayer: tx.from } };
  } catch (err) {
    if (err instanceof TransactionWouldRevertError) return transferNotExecuted(ctx, err.reason);
    // checked in the pre-flight too; the payer's wallet changed since: nothing was sent for the transfer
    if (err instanceof GasCapExceededError) return transferNotExecuted(ctx, err.message);
    throw err;
  }
};

/**
 * An x402 settle request is answered within its hold; one that could not wait any longer for this transfer
 * withheld it and answered failed (apps/api x402-settle-outcome.ts), so the transfer is never sent: the
 * payer, whose buyer was refused, is not charged; the fee already taken is kept (the spec's settlement_failed
 * after the fee). The worker commits first otherwise, and the request then waits for the hash. Only x402
 * settlements have such a request (one statement on the sequential path; the atomic path never comes here).
 */
async function transferWithheld(ctx: Parameters<Step>[0]): Promise<Awaited<ReturnType<Step>> | undefined> {
  if (ctx.settlement.surface !== 'x402' || (await ctx.records.claimTransfer())) return undefined;
  return transferNotExecuted(ctx, 'the settle request was answered before the transfer could be sent: it is not sent');
}
