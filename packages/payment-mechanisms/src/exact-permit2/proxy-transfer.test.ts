import { X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import { AMOUNT, PAYEE, PAYER, permit2Payment, settledLog, transferLog } from '../testing/permit2-chain';
import { exactPermit2 } from '.';

const payment = permit2Payment();
const paid = (logs: Parameters<NonNullable<typeof exactPermit2.evmExecution>['paidIn']>[0]) => exactPermit2.evmExecution!.paidIn(logs, payment, { chainId: 84532, tokenAddress: payment.payload.token });
const OTHER = '0x' + '77'.repeat(20);

describe('what a Permit2 payment paid its payee, from a transaction\'s logs', () => {
  it("counts the transfer the exact proxy made: the token's Transfer, then the proxy's Settled or SettledWithPermit", () => {
    expect(paid([transferLog(PAYER, PAYEE, AMOUNT, 0), settledLog(1)])).toBe(AMOUNT);
    // settleWithPermit: the token's Approval for Permit2 comes first, then the same pair
    const approval = { address: payment.payload.token, topics: ['0x' + '8c'.repeat(32)], data: '0x', index: 0 };
    expect(paid([approval, transferLog(PAYER, PAYEE, AMOUNT, 1), settledLog(2, 'SettledWithPermit()')])).toBe(AMOUNT);
    // a transfer of the payer's to the payee beside the proxy's is not the payment's
    expect(paid([transferLog(PAYER, PAYEE, 5n, 0), transferLog(PAYER, PAYEE, AMOUNT, 1), settledLog(2)])).toBe(AMOUNT);
  });

  it('counts no transfer the exact proxy did not make, nor one to someone else or of another token', () => {
    expect(paid([transferLog(PAYER, PAYEE, AMOUNT, 0)])).toBe(0n);
    expect(paid([transferLog(PAYER, PAYEE, AMOUNT, 0), settledLog(1, 'Settled()', X402_UPTO_PERMIT2_PROXY)])).toBe(0n);
    expect(paid([settledLog(0), transferLog(PAYER, PAYEE, AMOUNT, 1)])).toBe(0n);
    expect(paid([transferLog(PAYER, OTHER, AMOUNT, 0), settledLog(1)])).toBe(0n);
    expect(paid([transferLog(OTHER, PAYEE, AMOUNT, 0), settledLog(1)])).toBe(0n);
    expect(paid([transferLog(PAYER, PAYEE, AMOUNT, 0, OTHER), settledLog(1)])).toBe(0n);
    expect(paid([])).toBe(0n);
  });

  it('counts nothing when the proxy made several such transfers: they do not say which is this payment\'s', () => {
    const twice = [transferLog(PAYER, PAYEE, AMOUNT, 0), settledLog(1), transferLog(PAYER, PAYEE, 5n, 2), settledLog(3)];
    expect(paid(twice)).toBe(0n);
  });
});
