import { exactEip3009 } from './exact-eip3009';
import { exactPermit2 } from './exact-permit2';
import type { MechanismChain } from './chain-port';
import type { PaymentMechanism } from './mechanism';
import { amountToSettle, settleAmountProblem } from './settle-amount';
import { permit2Payment } from './testing/permit2-chain';

const signed = { amount: 1_000n };
const exact = { id: 'exact/permit2', signedAmount: 'exact' } as Pick<PaymentMechanism<unknown>, 'id' | 'signedAmount'>;
const maximum = { id: 'upto/permit2', signedAmount: 'maximum' } as unknown as Pick<PaymentMechanism<unknown>, 'id' | 'signedAmount'>;

describe('the amount a payment may settle', () => {
  it('is exactly the signed amount when it is exact', () => {
    expect(settleAmountProblem(exact, signed, 1_000n)).toBeUndefined();
    expect(settleAmountProblem(exact, signed, 999n)).toBe('the payment moves exactly its signed amount 1000, not 999');
    expect(settleAmountProblem(exact, signed, 1_001n)).toBeDefined();
    expect(settleAmountProblem(exact, signed, 0n)).toBeDefined();
  });

  it('is more than nothing and at most the signed amount when that is a maximum', () => {
    expect(settleAmountProblem(maximum, signed, 1n)).toBeUndefined();
    expect(settleAmountProblem(maximum, signed, 1_000n)).toBeUndefined();
    expect(settleAmountProblem(maximum, signed, 0n)).toBe('a settle amount must be more than 0, not 0');
    expect(settleAmountProblem(maximum, signed, -1n)).toBeDefined();
    expect(settleAmountProblem(maximum, signed, 1_001n)).toBe('the settle amount 1001 is above the signed maximum 1000');
  });

  it('is what a direct call moves: the order checked, the signed amount without one only where it is exact', () => {
    expect(amountToSettle(exact, signed)).toBe(1_000n);
    expect(amountToSettle(exact, signed, { amount: 1_000n })).toBe(1_000n);
    expect(() => amountToSettle(exact, signed, { amount: 10n })).toThrow('exact/permit2: the payment moves exactly its signed amount 1000, not 10');
    expect(amountToSettle(maximum, signed, { amount: 10n })).toBe(10n);
    expect(() => amountToSettle(maximum, signed)).toThrow("a upto/permit2 payment's direct call needs the amount to settle");
    expect(() => amountToSettle(maximum, signed, { amount: 1_001n })).toThrow('above the signed maximum');
  });

  it("leaves the exact mechanisms' direct calls as they were, and refuses an order for another amount", () => {
    const payment = permit2Payment();
    const chain = {} as MechanismChain;
    expect(exactPermit2.signedAmount).toBe('exact');
    expect(exactEip3009.signedAmount).toBe('exact');
    expect(exactPermit2.evmExecution!.directCall(payment, chain, { amount: payment.terms.amount })).toEqual(exactPermit2.evmExecution!.directCall(payment, chain));
    expect(exactPermit2.evmExecution!.directCall(payment, chain).sender).toBeUndefined();
    expect(() => exactPermit2.evmExecution!.directCall(payment, chain, { amount: payment.terms.amount - 1n })).toThrow('moves exactly its signed amount');
    // checked before the token is asked for anything
    expect(() => exactEip3009.evmExecution!.directCall({ terms: { amount: 5n } } as never, chain, { amount: 4n })).toThrow('exact/eip3009: the payment moves exactly its signed amount 5, not 4');
  });
});
