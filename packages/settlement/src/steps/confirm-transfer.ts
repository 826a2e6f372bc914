import { evmExecutionOf } from '@facilitator/payment-mechanisms';
import { mechanismNetworkOf, paymentOf } from '../payment';
import type { Step } from '../step';
import { PaymentOutcomeUnknownError } from '../payment-outcome-unknown';
import { transferNotExecuted } from './transfer-not-executed';

/** `executing`: wait for the transfer's confirmations; settled, or failed with the fee kept. */
export const confirmTransfer: Step = async (ctx) => {
  const { settlement } = ctx;
  const sent = await ctx.chain.transactions.find(settlement.id, 'transfer');
  // executing is only entered after the transfer was stored, so this is a broken invariant, not a chain failure
  if (!sent) throw new Error(`settlement ${settlement.id} is executing but has no transfer transaction`);
  const outcome = await ctx.chain.outcomes.within(sent.id, ctx.network.confirmations);
  if (outcome.status === 'pending') return { awaiting: outcome };
  if (outcome.status === 'reverted') return transferNotExecuted(ctx, outcome.reason ?? 'transfer reverted', outcome.hash);
  // what the payment moved, as its mechanism reads the transaction's logs: "paid" is read from a transfer,
  // never from a receipt's status alone (a call that succeeds and moves nothing, e.g. to a proxy missing on
  // this chain, must not tell a merchant it was paid)
  const { mechanism, parsed } = paymentOf(settlement);
  const paid = evmExecutionOf(mechanism).paidIn(outcome.logs, parsed, mechanismNetworkOf(ctx));
  // the settlement's own amount: the signed one, or what the merchant settles of an upto maximum
  const amount = BigInt(settlement.amount);
  if (paid < amount) {
    throw new PaymentOutcomeUnknownError(settlement.id, `its transaction ${outcome.hash} succeeded and its logs show ${paid} of ${amount} moved to the merchant`);
  }
  return {
    to: 'settled',
    data: { settlementTxHash: outcome.hash, settledAt: new Date(), merchantPaid: true },
    note: { tx_hash: outcome.hash, block: outcome.blockNumber, paid: paid.toString() },
  };
};
