import type { PayerInFlight } from '@facilitator/db';
import { approvalCommands } from '../approval-command';
import { failed, failurePaused, feeCollectionFailed, insufficientAllowance, settlementDoomed } from '../failures';
import type { ReservationRefusalTerms, StepResult, StepWait } from '../step-outcome';
import { SettlementWaitReason } from '../wait-reasons';

/**
 * Why the reservation was refused, as the step's answer: a wait while other fees (or the payer's other
 * payments) in flight are what stands in the way and the authorization lasts, else the failure the spec names
 * (`insufficient_allowance`, `fee_collection_failed`, `settlement_failed`). `nowSeconds`: Unix seconds.
 */
export function reservationRefusal(terms: ReservationRefusalTerms, inFlight: bigint, payerInFlight: PayerInFlight | undefined, nowSeconds: number): StepResult | StepWait {
  const { allowance, balance, fee, merchant, treasury } = terms;
  const stillValid = terms.validBefore > BigInt(nowSeconds + terms.expiryMarginSeconds);
  const merchantWait = merchantFeesInFlight(terms, inFlight, stillValid);
  if (merchantWait) return merchantWait;
  if (allowance - inFlight < fee) {
    const commands = approvalCommands(terms.chainId, terms.tokenAddress, treasury, fee);
    const available = allowance > inFlight ? allowance - inFlight : 0n;
    return failed(insufficientAllowance({ required: fee, available, merchant, treasury, ...commands, inFlight }), true);
  }
  if (balance - inFlight < fee) {
    const spare = balance > inFlight ? balance - inFlight : 0n;
    return failed(feeCollectionFailed('merchant token balance is below the fee', spare, fee, inFlight), true);
  }
  // the merchant fits: the payer's other payments in flight are what stands in the way
  return payerRefusal(terms, payerInFlight ?? { value: 0n, items: 0 }, stillValid);
}

/** The payer cannot back this payment at all (its balance, or what it approved, is below the amount). */
export function payerBalanceInsufficient(payerBalance: bigint, value: bigint, inFlight?: PayerInFlight): StepResult {
  return failed(
    settlementDoomed('payer balance insufficient', {
      payer_balance: payerBalance.toString(),
      amount: value.toString(),
      ...(inFlight ? { payer_value_in_flight: inFlight.value.toString() } : {}),
    }),
    true,
  );
}

/**
 * The merchant's allowance and balance cover this fee alone but not on top of its other fees in flight: it
 * waits for them, nothing sent, as long as the authorization lasts. A fee in flight is either taken (then the
 * allowance read next time is what is left, and a fee it no longer covers fails then) or never will be. Without
 * the wait, a fee already taken on chain but not yet recorded by its settlement (its job wakes a moment after
 * the block) would be counted twice, and a payment the merchant can pay for refused.
 */
function merchantFeesInFlight(terms: ReservationRefusalTerms, inFlight: bigint, stillValid: boolean): StepWait | undefined {
  const { allowance, balance, fee } = terms;
  const fitsAlone = allowance >= fee && balance >= fee;
  const fitsWithOthers = allowance - inFlight >= fee && balance - inFlight >= fee;
  if (!fitsAlone || fitsWithOthers || inFlight === 0n || !stillValid) return undefined;
  return {
    wait: {
      reason: SettlementWaitReason.MerchantFeesInFlight,
      detail: { allowance: allowance.toString(), balance: balance.toString(), fees_in_flight: inFlight.toString(), fee: fee.toString() },
    },
  };
}

/**
 * The payment fits the payer's balance alone but not on top of its other payments in flight (or a
 * contract-wallet payer has its allowed items in flight): it waits for them, nothing sent. When they settle,
 * the balance read next time is what is left, and a payment it no longer covers fails then.
 */
function payerRefusal(terms: ReservationRefusalTerms, inFlight: PayerInFlight, stillValid: boolean): StepResult | StepWait {
  const pause = terms.payerPause;
  if (pause && (inFlight.failures ?? 0) >= pause.afterFailures && inFlight.lastFailureAt) {
    const until = new Date(inFlight.lastFailureAt.getTime() + pause.windowMs);
    return failed(failurePaused({ who: 'payer', until, failures: inFlight.failures! }), true);
  }
  const payerBalance = terms.payerBalance ?? 0n;
  if (payerBalance < terms.value) return payerBalanceInsufficient(payerBalance, terms.value, inFlight);
  if (!stillValid) {
    return failed(settlementDoomed("authorization expired while the payer's other payments were in flight", { validBefore: terms.validBefore.toString() }), true);
  }
  return {
    wait: {
      reason: SettlementWaitReason.PayerFundsInFlight,
      detail: { payer_balance: payerBalance.toString(), payer_value_in_flight: inFlight.value.toString(), payer_items_in_flight: inFlight.items, amount: terms.value.toString() },
    },
  };
}
