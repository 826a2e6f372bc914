import { approvalFor } from '@facilitator/payment-mechanisms';
import { failurePauseOf } from '../accounting';
import { paymentOf, termsOf } from '../payment';
import { failed, failurePaused, merchantPaused, settlementDoomed } from '../failures';
import { payerBalanceInsufficient } from './reservation-refusal';
import type { Step, StepContext } from '../step';
import { pathOf } from './settlement-path';
import { sequentialPathUnavailable } from '../waiting';
import { type StepResult, isWait } from '../step-outcome';

/**
 * `check_allowance`: the merchant's allowance and balance must cover this fee on top of every fee already
 * in flight for it (reserved in Postgres by the transition to collect_fee, across worker processes), so
 * no fee transaction is ever sent that the merchant cannot pay. Likewise the payer's balance must cover
 * this payment on top of its other payments in flight, so one balance cannot back many concurrent payments
 * that then fail on chain at our expense. A merchant whose fee transfers keep reverting is paused for a
 * while; a payer whose payments keep failing on chain too (see accounting.ts). The merchant's current
 * minimum is checked again: it may have been raised since the payment was verified.
 */
export const checkAllowance: Step = async (ctx) => {
  const paused = await pausedUntil(ctx);
  if (paused) return failed(merchantPaused(paused, ctx.policy.merchantPause.afterReverts), true);
  const refusedByAccounting = await accountingRefusal(ctx);
  if (refusedByAccounting) return refusedByAccounting;
  const path = pathOf(ctx);
  const unavailable = sequentialPathUnavailable(ctx, path);
  if (unavailable) return unavailable;
  const { merchant, payer } = ctx.settlement;
  const { usdc } = ctx.network;
  const accounting = ctx.policy.accounting;
  const { mechanism, parsed } = paymentOf(ctx.settlement);
  const [allowance, balance, heldBalance, approval, contractPayer] = await Promise.all([
    usdc.allowance(merchant, ctx.signers.treasury),
    usdc.balanceOf(merchant),
    accounting ? usdc.balanceOf(payer) : undefined,
    accounting ? mechanism.approval?.read(parsed, usdc) : undefined,
    accounting ? ctx.chain.codeAt(payer) : false,
  ]);
  // what the payer can pay from: its balance, and no more than it approved a mechanism that moves only that
  // (Permit2): one approval backs all its payments in flight, reserved here as its balance is. A payment
  // sent with its approval permit (the allowance is short) counts what the permit sets: it replaces the allowance
  const value = BigInt(ctx.settlement.amount);
  const counted = approval && approvalFor(approval, value);
  const approved = counted?.allowance;
  const payerBalance = heldBalance !== undefined && approved !== undefined && approved < heldBalance ? approved : heldBalance;
  if (contractPayer && path === 'sequential' && accounting?.sequentialContractPayers === 'refuse' && ctx.policy.feeAmount > 0n) {
    // the fee would be taken ahead of a transfer whose outcome the payer's code decides: refused before the
    // fee (a settlement charged none puts no fee at risk)
    return failed(
      settlementDoomed('a contract-wallet payer is settled only on the atomic path', { payer_kind: 'contract', path: 'sequential' }),
      true,
    );
  }
  if (payerBalance !== undefined && payerBalance < value) return payerBalanceInsufficient(payerBalance, value);
  const request = {
    merchant,
    chainId: ctx.network.chainId,
    tokenAddress: usdc.tokenAddress,
    fee: ctx.policy.feeAmount,
    allowance,
    balance,
    ...(payerBalance !== undefined && accounting
      ? {
          payer: {
            address: payer,
            value,
            balance: payerBalance,
            ...(contractPayer ? { maxInFlight: accounting.contractPayerMaxInFlight } : {}),
            // a payment that counts its own approval permit is the payer's only one in flight: two permits of one
            // token nonce replace each other, so a second would count an allowance the first one's execution spends
            ...(counted?.withPermit ? { maxInFlight: 1 } : {}),
            // counted again under the payer's lock: an item that failed since the check above is not missed
            pause: { afterFailures: accounting.pause.payerAfterFailures, since: new Date(Date.now() - accounting.pause.windowMs) },
          },
        }
      : {}),
  };
  return {
    to: 'collect_fee',
    // the path is fixed here, before any money moves: a worker restarted with another mode finishes it the same way
    data: { settlementMode: path },
    note: {
      allowance: allowance.toString(),
      balance: balance.toString(),
      path,
      ...(payerBalance !== undefined ? { payer_balance: payerBalance.toString(), payer_kind: contractPayer ? 'contract' : 'eoa' } : {}),
      ...(approval !== undefined ? { payer_approval: approval.allowance.toString(), payer_approved_spender: approval.spender } : {}),
    },
    // what the machine answers, from these reads and what Postgres holds in flight, if the reservation is refused
    reserveFee: {
      request,
      refusal: {
        fee: ctx.policy.feeAmount,
        merchant,
        treasury: ctx.signers.treasury,
        chainId: ctx.network.chainId,
        tokenAddress: usdc.tokenAddress,
        allowance,
        balance,
        ...(payerBalance !== undefined ? { payerBalance } : {}),
        value,
        validBefore: termsOf(ctx.settlement).validBefore,
        expiryMarginSeconds: ctx.policy.expiryMarginSeconds,
        ...(accounting ? { payerPause: { afterFailures: accounting.pause.payerAfterFailures, windowMs: accounting.pause.windowMs } } : {}),
      },
    },
  };
};

/**
 * What check_allowance would refuse for a contract-wallet payer before any money moves, asked before an
 * ERC-6492 payer's wallet is deployed at our expense too (the deployment comes before check_allowance):
 * the merchant's fee-revert pause, the failure accounting's pauses, the minimum, and the sequential path
 * (no fee ahead of a transfer the payer's code decides). A deployment for a payment that would then be
 * refused is free work for a stranger.
 */
export async function refusalBeforeWalletDeployment(ctx: StepContext): Promise<StepResult | undefined> {
  const paused = await pausedUntil(ctx);
  if (paused) return failed(merchantPaused(paused, ctx.policy.merchantPause.afterReverts), true);
  const refusedByAccounting = await accountingRefusal(ctx);
  if (refusedByAccounting) return refusedByAccounting;
  const path = pathOf(ctx);
  const unavailable = sequentialPathUnavailable(ctx, path);
  // a wait is decided again at check_allowance; a payment that can never settle here gets no wallet deployed
  if (unavailable && !isWait(unavailable)) return unavailable;
  if (path === 'sequential' && ctx.policy.accounting?.sequentialContractPayers === 'refuse' && ctx.policy.feeAmount > 0n) {
    return failed(settlementDoomed('a contract-wallet payer is settled only on the atomic path', { payer_kind: 'erc6492', path: 'sequential' }), true);
  }
  return undefined;
}

/** The failure accounting's pause of the payer (or of the merchant for this payer), then the minimum. */
async function accountingRefusal(ctx: StepContext): Promise<StepResult | undefined> {
  const accounting = ctx.policy.accounting;
  if (!accounting) return undefined;
  const { payer, merchant } = ctx.settlement;
  const pause = await failurePauseOf(accounting.counts, accounting.pause, { payer, merchant, chainId: ctx.network.chainId });
  if (pause) return failed(failurePaused(pause), true);
  const minimum = (await accounting.minimumFor(merchant)) ?? ctx.policy.feeAmount;
  // the minimum applies to what the payer signed: an upto payment's maximum, which verify held to it, not
  // the amount the merchant settled of it (docs/decisions.md, "`upto` served")
  const { mechanism, parsed } = paymentOf(ctx.settlement);
  const value = mechanism.signedAmount === 'maximum' ? parsed.terms.amount : BigInt(ctx.settlement.amount);
  if (value < minimum) {
    // the same reason verify gives: the merchant raised its minimum (or lost settle protection) after verify
    return failed(settlementDoomed('amount below minimum', { authorization_value: value.toString(), minimum_amount: minimum.toString() }), true);
  }
  return undefined;
}

/** When the merchant's fee transfers reverted too often lately: until when its settlements pause. */
async function pausedUntil(ctx: StepContext): Promise<Date | undefined> {
  const { afterReverts, windowMs } = ctx.policy.merchantPause;
  const reverts = await ctx.records.feeRevertsOfMerchant(ctx.settlement.merchant, ctx.network.chainId, new Date(Date.now() - windowMs));
  if (reverts.count < afterReverts || !reverts.lastAt) return undefined;
  return new Date(reverts.lastAt.getTime() + windowMs);
}
