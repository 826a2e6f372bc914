import { X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import { AMOUNT, PAYEE, PAYER, settledLog, transferLog, uptoPayment } from '../testing/permit2-chain';
import { uptoPermit2 } from '.';

const payment = uptoPayment();
const paid = (logs: Parameters<NonNullable<typeof uptoPermit2.evmExecution>['paidIn']>[0]) => uptoPermit2.evmExecution!.paidIn(logs, payment, { chainId: 84532, tokenAddress: payment.payload.token });
const settled = (index: number, event: 'Settled()' | 'SettledWithPermit()' = 'Settled()') => settledLog(index, event, X402_UPTO_PERMIT2_PROXY);
const OTHER = '0x' + '77'.repeat(20);

describe("what an upto payment paid its payee, from a transaction's logs", () => {
  it("counts the transfer the upto proxy made, whatever amount up to the maximum it moved", () => {
    expect(paid([transferLog(PAYER, PAYEE, 250_000n, 0), settled(1)])).toBe(250_000n);
    expect(paid([transferLog(PAYER, PAYEE, AMOUNT, 0), settled(1)])).toBe(AMOUNT);
    const approval = { address: payment.payload.token, topics: ['0x' + '8c'.repeat(32)], data: '0x', index: 0 };
    expect(paid([approval, transferLog(PAYER, PAYEE, 3n, 1), settled(2, 'SettledWithPermit()')])).toBe(3n);
  });

  it("counts no transfer the upto proxy did not make (the exact proxy's included), nor one to someone else or of another token", () => {
    expect(paid([transferLog(PAYER, PAYEE, 5n, 0)])).toBe(0n);
    expect(paid([transferLog(PAYER, PAYEE, 5n, 0), settledLog(1, 'Settled()', X402_EXACT_PERMIT2_PROXY)])).toBe(0n);
    expect(paid([transferLog(PAYER, OTHER, 5n, 0), settled(1)])).toBe(0n);
    expect(paid([transferLog(PAYER, PAYEE, 5n, 0, OTHER), settled(1)])).toBe(0n);
  });

  it("counts nothing when the proxy made several such transfers: they do not say which is this payment's", () => {
    expect(paid([transferLog(PAYER, PAYEE, 5n, 0), settled(1), transferLog(PAYER, PAYEE, 6n, 2), settled(3)])).toBe(0n);
  });
});
