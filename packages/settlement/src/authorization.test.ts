import { authorizationOf, rawSignatureOf, signatureOf } from './authorization';
import { AMOUNT, ERC6492_SIGNATURE, MERCHANT, NONCE, NOW, PAYER, PLAIN_SIGNATURE, settlementFixture } from './testing/fakes';

const storedPayment = (overrides: Record<string, string> = {}, signature = PLAIN_SIGNATURE) => ({
  authorization: { from: PAYER, to: MERCHANT, value: AMOUNT.toString(), validAfter: '5', validBefore: String(NOW + 60), nonce: NONCE, ...overrides },
  signature,
});

describe('the payment a settlement executes', () => {
  it('is its own stored payload, read by its mechanism, not its verification', () => {
    // the verification says valid for an hour; the settlement's payload, a minute: the payload is what executes
    const settlement = settlementFixture({ payload: storedPayment() });
    expect(authorizationOf(settlement)).toEqual({ from: PAYER, to: MERCHANT, value: AMOUNT, validAfter: 5n, validBefore: BigInt(NOW + 60), nonce: NONCE });
    expect(rawSignatureOf(settlement)).toBe(PLAIN_SIGNATURE);
  });

  it('gives the token the wallet’s inner signature of an ERC-6492 payload, and keeps the wrapped one', () => {
    const settlement = settlementFixture({ payload: storedPayment({}, ERC6492_SIGNATURE) });
    expect(rawSignatureOf(settlement)).toBe(ERC6492_SIGNATURE.toLowerCase());
    expect(signatureOf(settlement)).toBe(PLAIN_SIGNATURE);
  });

  it('is rebuilt from the columns for a row an older process stored without a payload', () => {
    const settlement = settlementFixture({ payload: null }, { validAfter: '7', validBefore: String(NOW + 99) });
    expect(authorizationOf(settlement)).toEqual({ from: PAYER, to: MERCHANT, value: AMOUNT, validAfter: 7n, validBefore: BigInt(NOW + 99), nonce: NONCE });
    expect(rawSignatureOf(settlement)).toBe(PLAIN_SIGNATURE);
  });

  it.each([
    ['amount', { value: (AMOUNT + 1n).toString() }],
    ['merchant', { to: '0x' + '77'.repeat(20) }],
    ['payer', { from: '0x' + '88'.repeat(20) }],
    ['nonce', { nonce: '0x' + 'cd'.repeat(32) }],
  ])('is refused when its stored %s is not its row’s: one payment is never executed while another is reported', (field, overrides) => {
    const settlement = settlementFixture({ payload: storedPayment(overrides) });
    expect(() => authorizationOf(settlement)).toThrow(`its stored payment's ${field}`);
    expect(() => signatureOf(settlement)).toThrow(`its stored payment's ${field}`);
  });

  it('is refused when its verification was rejected after the settlement copied it', () => {
    const settlement = settlementFixture({}, { status: 'rejected' });
    expect(() => authorizationOf(settlement)).toThrow('was rejected; its payment is not executed');
  });

  it('is refused for a mechanism this worker cannot execute', () => {
    const settlement = settlementFixture({ mechanism: 'exact/permit2', payload: { permit2Authorization: {} } });
    expect(() => authorizationOf(settlement)).toThrow('mechanism exact/permit2, which this worker cannot execute');
  });
});
