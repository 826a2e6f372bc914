import { tokenSignature } from '@facilitator/evm-chain';
import { exactEip3009, exactPermit2, uptoPermit2, type ExactEip3009Payload, EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2 } from '@facilitator/payment-mechanisms';
import { directCallOf, paymentOf, rawSignatureOf, termsOf } from './payment';
import {
  AMOUNT,
  ERC6492_SIGNATURE,
  MERCHANT,
  NONCE,
  NOW,
  PAYER,
  PERMIT2_NONCE,
  permit2SettlementFixture,
  PLAIN_SIGNATURE,
  settlementFixture,
  TOKEN,
  TREASURY,
  uptoSettlementFixture,
} from './testing/fakes';

const storedPayment = (overrides: Record<string, string> = {}, signature = PLAIN_SIGNATURE) => ({
  authorization: { from: PAYER, to: MERCHANT, value: AMOUNT.toString(), validAfter: '5', validBefore: String(NOW + 60), nonce: NONCE, ...overrides },
  signature,
});
const authorizationOf = (settlement: Parameters<typeof paymentOf>[0]) => (paymentOf(settlement).parsed.payload as ExactEip3009Payload).authorization;

describe('the payment a settlement executes', () => {
  it('is its own stored payload, read by its mechanism, not its verification', () => {
    // the verification says valid for an hour; the settlement's payload, a minute: the payload is what executes
    const settlement = settlementFixture({ payload: storedPayment() });
    expect(paymentOf(settlement).mechanism).toBe(exactEip3009);
    expect(authorizationOf(settlement)).toEqual({ from: PAYER, to: MERCHANT, value: AMOUNT, validAfter: 5n, validBefore: BigInt(NOW + 60), nonce: NONCE });
    expect(termsOf(settlement)).toMatchObject({ mechanism: EXACT_EIP3009, payer: PAYER, payee: MERCHANT, amount: AMOUNT, validBefore: BigInt(NOW + 60), nonce: { space: TOKEN, payer: PAYER, value: NONCE } });
    expect(rawSignatureOf(settlement)).toBe(PLAIN_SIGNATURE);
  });

  it('keeps an ERC-6492 payload’s wrapped signature; the token is given the wallet’s inner one', () => {
    const settlement = settlementFixture({ payload: storedPayment({}, ERC6492_SIGNATURE) });
    expect(rawSignatureOf(settlement)).toBe(ERC6492_SIGNATURE.toLowerCase());
    expect(tokenSignature(rawSignatureOf(settlement))).toBe(PLAIN_SIGNATURE);
  });

  it('is rebuilt from the columns for a row an older process stored without a payload', () => {
    const settlement = settlementFixture({ payload: null }, { validAfter: '7', validBefore: String(NOW + 99) });
    expect(paymentOf(settlement).mechanism).toBe(exactEip3009);
    expect(authorizationOf(settlement)).toEqual({ from: PAYER, to: MERCHANT, value: AMOUNT, validAfter: 7n, validBefore: BigInt(NOW + 99), nonce: NONCE });
    expect(rawSignatureOf(settlement)).toBe(PLAIN_SIGNATURE);
  });

  it('is not rebuilt from the columns for another mechanism: only EIP-3009 rows predate the payload', () => {
    const settlement = settlementFixture({ mechanism: EXACT_PERMIT2, payload: null });
    expect(() => paymentOf(settlement)).toThrow('a payment of mechanism exact/permit2 without a stored payload');
  });

  it.each([
    ['amount', { value: (AMOUNT + 1n).toString() }],
    ['merchant', { to: '0x' + '77'.repeat(20) }],
    ['payer', { from: '0x' + '88'.repeat(20) }],
    ['nonce', { nonce: '0x' + 'cd'.repeat(32) }],
  ])('is refused when its stored %s is not its row’s: one payment is never executed while another is reported', (field, overrides) => {
    const settlement = settlementFixture({ payload: storedPayment(overrides) });
    const refusal = field === 'amount' ? "its row's amount does not fit its stored payment" : `its stored payment's ${field}`;
    expect(() => paymentOf(settlement)).toThrow(refusal);
    expect(() => rawSignatureOf(settlement)).toThrow(refusal);
  });

  it('is read by its own mechanism for a Permit2 row, and refused there too when the payload is not the row’s', () => {
    const settlement = permit2SettlementFixture();
    expect(paymentOf(settlement).mechanism).toBe(exactPermit2);
    expect(termsOf(settlement)).toMatchObject({ mechanism: EXACT_PERMIT2, payer: PAYER, payee: MERCHANT, amount: AMOUNT, validBefore: BigInt(NOW + 3601) });
    const stored = settlement.payload as { permit2Authorization: Record<string, string | Record<string, string>>; signature: string };
    const changed = (fields: Record<string, string | Record<string, string>>) =>
      permit2SettlementFixture({ payload: { ...stored, permit2Authorization: { ...stored.permit2Authorization, ...fields } } });
    expect(() => paymentOf(changed({ nonce: String(PERMIT2_NONCE + 1n) }))).toThrow("its stored payment's nonce");
    expect(() => paymentOf(changed({ permitted: { token: TOKEN, amount: String(AMOUNT + 1n) } }))).toThrow(
      "its row's amount does not fit its stored payment: the payment moves exactly its signed amount",
    );
    expect(() => paymentOf(changed({ witness: { to: '0x' + '77'.repeat(20), validAfter: '0' } }))).toThrow("its stored payment's merchant");
    expect(() => paymentOf(changed({ from: '0x' + '88'.repeat(20) }))).toThrow("its stored payment's payer");
    // Permit2 moves whatever token was signed: one that is not the row's (the network's) would be paid unseen
    expect(() => paymentOf(changed({ permitted: { token: '0x' + '55'.repeat(20), amount: AMOUNT.toString() } }))).toThrow("its stored payment's token");
  });

  it('is refused when its verification was rejected after the settlement copied it', () => {
    const settlement = settlementFixture({}, { status: 'rejected' });
    expect(() => paymentOf(settlement)).toThrow('was rejected; its payment is not executed');
  });

  it('is refused for a mechanism this worker does not know', () => {
    const settlement = settlementFixture({ mechanism: 'later/unknown', payload: { permit2Authorization: {} } });
    expect(() => paymentOf(settlement)).toThrow('mechanism later/unknown, which this worker cannot execute');
  });

  it('settles what its upto row owns: more than 0 and at most the signed maximum, and calls for exactly that', () => {
    const chain = { tokenAddress: TOKEN } as Parameters<typeof directCallOf>[1];
    const part = uptoSettlementFixture(AMOUNT / 4n);
    expect(paymentOf(part).mechanism).toBe(uptoPermit2);
    // the terms keep the signed maximum; the row's amount is what moves, and the treasury is the one sender
    expect(termsOf(part)).toMatchObject({ mechanism: UPTO_PERMIT2, amount: AMOUNT, sender: TREASURY });
    const call = directCallOf(part, chain);
    expect(call.sender).toBe(TREASURY);
    const settled = uptoPermit2.evmExecution!.directCall(paymentOf(part).parsed as never, chain, { amount: AMOUNT / 4n });
    expect(call.data).toBe(settled.data);
    expect(call.data).not.toBe(uptoPermit2.evmExecution!.directCall(paymentOf(part).parsed as never, chain, { amount: AMOUNT }).data);
    expect(directCallOf(uptoSettlementFixture(AMOUNT), chain).to).toBe(call.to);
    // a row for more than the payer signed, or for nothing, is never executed
    expect(() => paymentOf(uptoSettlementFixture(AMOUNT + 1n))).toThrow('is above the signed maximum');
    expect(() => paymentOf(uptoSettlementFixture(0n))).toThrow('must be more than 0');
  });
});
