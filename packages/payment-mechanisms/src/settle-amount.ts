import type { PaymentMechanism, PaymentTerms, SettleOrder } from './mechanism';

/**
 * Why a payment cannot settle `amount`, if it cannot: a signed exact amount moves that amount and no other;
 * a signed maximum moves more than nothing and no more than it (x402's upto). Whether to settle nothing at
 * all (upto's zero: no transaction) is the engine's decision, not a settle amount.
 */
export function settleAmountProblem(mechanism: Pick<PaymentMechanism<unknown>, 'signedAmount'>, terms: Pick<PaymentTerms, 'amount'>, amount: bigint): string | undefined {
  if (mechanism.signedAmount === 'exact') {
    return amount === terms.amount ? undefined : `the payment moves exactly its signed amount ${terms.amount}, not ${amount}`;
  }
  if (amount <= 0n) return `a settle amount must be more than 0, not ${amount}`;
  if (amount > terms.amount) return `the settle amount ${amount} is above the signed maximum ${terms.amount}`;
  return undefined;
}

/**
 * The amount a direct call moves: the order's, checked; without an order, the signed amount where it is
 * exact. A signed maximum without an order is refused rather than settled whole: the merchant names the
 * amount, and a caller that forgot it must not take the payer's maximum.
 */
export function amountToSettle(mechanism: Pick<PaymentMechanism<unknown>, 'signedAmount' | 'id'>, terms: Pick<PaymentTerms, 'amount'>, settle?: SettleOrder): bigint {
  if (settle === undefined) {
    if (mechanism.signedAmount === 'exact') return terms.amount;
    throw new Error(`a ${mechanism.id} payment's direct call needs the amount to settle: its signed amount ${terms.amount} is a maximum`);
  }
  const problem = settleAmountProblem(mechanism, terms, settle.amount);
  if (problem) throw new Error(`${mechanism.id}: ${problem}`);
  return settle.amount;
}
