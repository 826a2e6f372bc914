import type { FeeReservationRequest, SettlementState, SettlementUpdate, TransitionHop } from '@facilitator/db';
import type { PendingOutcome } from './outcome-waits';
import type { SettlementWaitReason } from './wait-reasons';

// What a step answers: a transition (StepResult), a wait in its state with nothing sent (StepWait), or a
// transaction it sent whose outcome is not known yet (StepAwait). Types alone, read by the steps, the machine
// and the helpers the steps share, so none of them imports another back.

/** A step's answer: the state to go to, with what is written with it. */
export interface StepResult {
  to: SettlementState;
  /** fields written together with the new state */
  data?: SettlementUpdate;
  /** kept in the transition's history row */
  note?: Record<string, unknown>;
  /**
   * states passed through on the way to `to` whose outcome is already known (one transaction collected the fee
   * and paid the merchant): persisted with it in one statement, each hop checked against the transition table
   * and given its own history row
   */
  through?: readonly TransitionHop[];
  /**
   * Take the transition only if the merchant can pay this fee on top of its fees in flight, and (when the
   * request names the payer) the payer's balance covers this payment on top of its value in flight (see
   * SettlementStore.transitionReservingFee); otherwise the machine persists, or waits for, what
   * `reservationRefusal` (steps/reservation-refusal.ts) answers over `refusal` and what is in flight.
   */
  reserveFee?: { request: FeeReservationRequest; refusal: ReservationRefusalTerms };
}

/** A step's answer when the chain does not let the settlement go on yet; nothing was sent. */
export interface StepWait {
  wait: { reason: SettlementWaitReason; detail: Record<string, unknown> };
}

export function isWait(result: StepResult | StepWait | StepAwait): result is StepWait {
  return 'wait' in result;
}

/**
 * A step's answer when a transaction it sent (or found sent) has no outcome yet: the settlement stays in its
 * state, nothing is recorded, and its job gives up its slot until the outcome is known (no job holds a slot
 * while it waits for a block).
 */
export interface StepAwait {
  awaiting: PendingOutcome;
}

export function isAwait(result: StepResult | StepWait | StepAwait): result is StepAwait {
  return 'awaiting' in result;
}

/** Whether the step leaves the settlement in its state (a wait for the chain, or a transaction's outcome). */
export function staysInState(result: StepResult | StepWait | StepAwait): result is StepWait | StepAwait {
  return 'wait' in result || 'awaiting' in result;
}

/**
 * What check_allowance read before it asked Postgres to reserve the fee (and the payer's value), as data: when
 * the reservation is refused, the machine answers with `reservationRefusal` over these reads and what Postgres
 * holds in flight. The step hands over no callback, so what a refusal says is decided by this one function.
 */
export interface ReservationRefusalTerms {
  /** the settlement's own fee */
  fee: bigint;
  merchant: string;
  treasury: string;
  chainId: number;
  tokenAddress: string;
  /** the merchant's allowance to the treasury and its balance, as read by the step */
  allowance: bigint;
  balance: bigint;
  /** what the payer can pay from (its balance, at most what it approved), when failure accounting is on */
  payerBalance?: bigint;
  /** the amount this settlement moves */
  value: bigint;
  /** the authorization's validBefore (Unix seconds), and the margin it must still have: a wait ends there */
  validBefore: bigint;
  expiryMarginSeconds: number;
  /** the failure accounting's pause of a payer, when it is on */
  payerPause?: { afterFailures: number; windowMs: number };
}
