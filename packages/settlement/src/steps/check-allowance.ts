import type { PayerInFlight } from '@facilitator/db';
import { approvalFor } from '@facilitator/payment-mechanisms';
import { failurePauseOf } from '../accounting';
import { approvalCommands } from '../approval-command';
import { paymentOf, termsOf } from '../payment';
import { failed, failurePaused, feeCollectionFailed, insufficientAllowance, merchantPaused, settlementDoomed } from '../failures';
import type { Step, StepContext } from '../step';
import { pathOf } from './settlement-path';
import { authorizationStillValid, sequentialPathUnavailable } from '../waiting';
import { type StepResult, isWait, type StepWait } from '../step-outcome';
import { SettlementWaitReason } from '../wait-reasons';

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
  if (paused) return failed(merchantPaused(paused, ctx.merchantPause.afterReverts), true);
  const refusedByAccounting = await accountingRefusal(ctx);
  if (refusedByAccounting) return refusedByAccounting;
  const path = pathOf(ctx);
  const unavailable = sequentialPathUnavailable(ctx, path);
  if (unavailable) return unavailable;
  const { merchant, payer } = ctx.settlement;
  const { usdc } = ctx.network;
  const accounting = ctx.accounting;
  const { mechanism, parsed } = paymentOf(ctx.settlement);
  const [allowance, balance, heldBalance, approval, contractPayer] = await Promise.all([
    usdc.allowance(merchant, ctx.treasury),
    usdc.balanceOf(merchant),
    accounting ? usdc.balanceOf(payer) : undefined,
    accounting ? mechanism.approval?.read(parsed, usdc) : undefined,
    accounting ? ctx.codeAt(payer) : false,
  ]);
  // what the payer can pay from: its balance, and no more than it approved a mechanism that moves only that
  // (Permit2): one approval backs all its payments in flight, reserved here as its balance is. A payment
  // sent with its approval permit (the allowance is short) counts what the permit sets: it replaces the allowance
  const value = BigInt(ctx.settlement.amount);
  const counted = approval && approvalFor(approval, value);
  const approved = counted?.allowance;
  const payerBalance = heldBalance !== undefined && approved !== undefined && approved < heldBalance ? approved : heldBalance;
  if (contractPayer && path === 'sequential' && accounting?.sequentialContractPayers === 'refuse' && ctx.feeAmount > 0n) {
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
    fee: ctx.feeAmount,
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
    reserveFee: { request, refused: (inFlight, payerInFlight) => refusal(ctx, { allowance, balance, payerBalance }, inFlight, payerInFlight) },
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
  if (paused) return failed(merchantPaused(paused, ctx.merchantPause.afterReverts), true);
  const refusedByAccounting = await accountingRefusal(ctx);
  if (refusedByAccounting) return refusedByAccounting;
  const path = pathOf(ctx);
  const unavailable = sequentialPathUnavailable(ctx, path);
  // a wait is decided again at check_allowance; a payment that can never settle here gets no wallet deployed
  if (unavailable && !isWait(unavailable)) return unavailable;
  if (path === 'sequential' && ctx.accounting?.sequentialContractPayers === 'refuse' && ctx.feeAmount > 0n) {
    return failed(settlementDoomed('a contract-wallet payer is settled only on the atomic path', { payer_kind: 'erc6492', path: 'sequential' }), true);
  }
  return undefined;
}

/** The failure accounting's pause of the payer (or of the merchant for this payer), then the minimum. */
async function accountingRefusal(ctx: StepContext): Promise<StepResult | undefined> {
  const accounting = ctx.accounting;
  if (!accounting) return undefined;
  const { payer, merchant } = ctx.settlement;
  const pause = await failurePauseOf(accounting.counts, accounting.pause, { payer, merchant, chainId: ctx.network.chainId });
  if (pause) return failed(failurePaused(pause), true);
  const minimum = (await accounting.minimumFor(merchant)) ?? ctx.feeAmount;
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

function payerBalanceInsufficient(payerBalance: bigint, value: bigint, inFlight?: PayerInFlight): StepResult {
  return failed(
    settlementDoomed('payer balance insufficient', {
      payer_balance: payerBalance.toString(),
      amount: value.toString(),
      ...(inFlight ? { payer_value_in_flight: inFlight.value.toString() } : {}),
    }),
    true,
  );
}

function refusal(
  ctx: StepContext,
  read: { allowance: bigint; balance: bigint; payerBalance?: bigint },
  inFlight: bigint,
  payerInFlight?: PayerInFlight,
): StepResult | StepWait {
  const { allowance, balance } = read;
  const { merchant } = ctx.settlement;
  const merchantWait = merchantFeesInFlight(ctx, read, inFlight);
  if (merchantWait) return merchantWait;
  if (allowance - inFlight < ctx.feeAmount) {
    const commands = approvalCommands(ctx.network.chainId, ctx.network.usdc.tokenAddress, ctx.treasury, ctx.feeAmount);
    const available = allowance > inFlight ? allowance - inFlight : 0n;
    return failed(
      insufficientAllowance({ required: ctx.feeAmount, available, merchant, treasury: ctx.treasury, ...commands, inFlight }),
      true,
    );
  }
  if (balance - inFlight < ctx.feeAmount) {
    const spare = balance > inFlight ? balance - inFlight : 0n;
    return failed(feeCollectionFailed('merchant token balance is below the fee', spare, ctx.feeAmount, inFlight), true);
  }
  // the merchant fits: the payer's other payments in flight are what stands in the way
  return payerRefusal(ctx, read.payerBalance ?? 0n, payerInFlight ?? { value: 0n, items: 0 });
}

/**
 * The merchant's allowance and balance cover this fee alone but not on top of its other fees in flight: it
 * waits for them, nothing sent, as long as the authorization lasts. A fee in flight is either taken (then the
 * allowance read next time is what is left, and a fee it no longer covers fails then) or never will be. Without
 * the wait, a fee already taken on chain but not yet recorded by its settlement (its job wakes a moment after
 * the block) would be counted twice, and a payment the merchant can pay for refused.
 */
function merchantFeesInFlight(ctx: StepContext, read: { allowance: bigint; balance: bigint }, inFlight: bigint): StepWait | undefined {
  const fitsAlone = read.allowance >= ctx.feeAmount && read.balance >= ctx.feeAmount;
  const fitsWithOthers = read.allowance - inFlight >= ctx.feeAmount && read.balance - inFlight >= ctx.feeAmount;
  if (!fitsAlone || fitsWithOthers || inFlight === 0n || !authorizationStillValid(ctx)) return undefined;
  return {
    wait: {
      reason: SettlementWaitReason.MerchantFeesInFlight,
      detail: { allowance: read.allowance.toString(), balance: read.balance.toString(), fees_in_flight: inFlight.toString(), fee: ctx.feeAmount.toString() },
    },
  };
}

/**
 * The payment fits the payer's balance alone but not on top of its other payments in flight (or a
 * contract-wallet payer has its allowed items in flight): it waits for them, nothing sent. When they settle,
 * the balance read next time is what is left, and a payment it no longer covers fails then.
 */
function payerRefusal(ctx: StepContext, payerBalance: bigint, inFlight: PayerInFlight): StepResult | StepWait {
  const pause = ctx.accounting?.pause;
  if (pause && (inFlight.failures ?? 0) >= pause.payerAfterFailures && inFlight.lastFailureAt) {
    const until = new Date(inFlight.lastFailureAt.getTime() + pause.windowMs);
    return failed(failurePaused({ who: 'payer', until, failures: inFlight.failures! }), true);
  }
  const value = BigInt(ctx.settlement.amount);
  if (payerBalance < value) return payerBalanceInsufficient(payerBalance, value, inFlight);
  if (!authorizationStillValid(ctx)) {
    return failed(settlementDoomed('authorization expired while the payer\'s other payments were in flight', { validBefore: termsOf(ctx.settlement).validBefore.toString() }), true);
  }
  return {
    wait: {
      reason: SettlementWaitReason.PayerFundsInFlight,
      detail: { payer_balance: payerBalance.toString(), payer_value_in_flight: inFlight.value.toString(), payer_items_in_flight: inFlight.items, amount: value.toString() },
    },
  };
}

/** When the merchant's fee transfers reverted too often lately: until when its settlements pause. */
async function pausedUntil(ctx: StepContext): Promise<Date | undefined> {
  const { afterReverts, windowMs } = ctx.merchantPause;
  const reverts = await ctx.feeRevertsOfMerchant(ctx.settlement.merchant, ctx.network.chainId, new Date(Date.now() - windowMs));
  if (reverts.count < afterReverts || !reverts.lastAt) return undefined;
  return new Date(reverts.lastAt.getTime() + windowMs);
}
