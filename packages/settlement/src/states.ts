import type { SettlementState } from '@facilitator/db';

/**
 * The spec's settlement state machine as data: for each state, the states it may move to. Every
 * transition the worker persists is checked against this table.
 */
export const TRANSITIONS: Readonly<Record<SettlementState, readonly SettlementState[]>> = {
  // an ERC-6492 payer whose wallet is not deployed yet goes through deploying_wallet first (before any fee)
  // `settled` before any fee when another transaction than ours executed the payment to the merchant (a
  // front-run, the payer's wallet sending it twice, another facilitator): found by the pre-flight, by the
  // batch's estimate, or in the atomic item's outcome; the customer was charged, so it is reported paid
  pending: ['check_allowance', 'deploying_wallet', 'settled', 'failed'],
  deploying_wallet: ['check_allowance', 'failed'],
  check_allowance: ['collect_fee', 'failed'],
  collect_fee: ['fee_collected', 'settled', 'failed'],
  // Beyond the spec's `executing`: straight to `failed` when the transfer cannot even be submitted (fee
  // kept), or to `settled` when someone else executed the authorization first and it paid the merchant.
  fee_collected: ['executing', 'settled', 'failed'],
  executing: ['settled', 'failed'],
  settled: [],
  failed: [],
};

const FINAL_STATES: readonly SettlementState[] = ['settled', 'failed'];

export function isFinal(state: SettlementState): boolean {
  return FINAL_STATES.includes(state);
}

export function canTransition(from: SettlementState, to: SettlementState): boolean {
  return TRANSITIONS[from].includes(to);
}

/**
 * `pending → settled` and `collect_fee → settled` exist only for a payment another transaction executed, which
 * the worker settles with that transaction's block stored and watched to finality (`settledOnExecution`). An
 * operator's hand-made `settled` has no watched block, so it is allowed only where our own transfer may have
 * paid (after our fee): the transitions an operator had before those edges were added.
 */
export function operatorCanResolve(from: SettlementState, to: SettlementState): boolean {
  if (to === 'settled' && (from === 'pending' || from === 'collect_fee')) return false;
  return canTransition(from, to);
}

/** The status-record value of a processing state. */
export function statusOf(state: SettlementState): 'pending' | 'settled' | 'failed' {
  return state === 'settled' ? 'settled' : state === 'failed' ? 'failed' : 'pending';
}
