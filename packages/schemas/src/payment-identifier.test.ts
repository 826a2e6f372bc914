import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension, generatePaymentId, isValidPaymentId, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { declareEip2612GasSponsoringExtension } from '@x402/extensions';
import { InvalidRequestError } from '@facilitator/core';
import { paymentIdOf, validateSettlementLookupQuery, validateX402RequestV2 } from './index';

const authorization = {
  from: '0x' + '1'.repeat(40),
  to: '0x' + '2'.repeat(40),
  value: '10000',
  validAfter: '0',
  validBefore: '9999999999',
  nonce: '0x' + 'a'.repeat(64),
};
const requirements = { scheme: 'exact', network: 'eip155:84532', amount: '10000', asset: '0x' + '3'.repeat(40), payTo: authorization.to };
const requestWith = (extensions: unknown) => ({
  x402Version: 2,
  paymentPayload: { x402Version: 2, accepted: requirements, payload: { authorization, signature: '0x' + 'b'.repeat(130) }, extensions },
  paymentRequirements: requirements,
});

function problemsOf(body: unknown): Array<{ path: string; message: string }> {
  try {
    validateX402RequestV2(body);
    return [];
  } catch (err) {
    return (err as InvalidRequestError).details!.errors as Array<{ path: string; message: string }>;
  }
}

describe('payment-identifier extension schema', () => {
  it('takes what a real x402 client attaches, and reads its id', () => {
    const id = generatePaymentId();
    const extensions = appendPaymentIdentifierToExtensions({ [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension() }, id);
    const body = validateX402RequestV2(requestWith(extensions));
    expect(paymentIdOf(body.paymentPayload.extensions)).toBe(id);
  });

  it('agrees with the extension on which ids are valid', () => {
    const samples = ['pay_7d5d747be160e280', 'a'.repeat(16), 'a'.repeat(15), 'a'.repeat(128), 'a'.repeat(129), 'pay_abc!@#defghijklmn', 'order-0123456789_AB', 'ünïcode_0123456789'];
    for (const id of samples) {
      const accepted = problemsOf(requestWith({ [PAYMENT_IDENTIFIER]: { info: { required: false, id } } })).length === 0;
      expect([id, accepted]).toEqual([id, isValidPaymentId(id)]);
    }
  });

  it('names the path of a malformed id', () => {
    expect(problemsOf(requestWith({ [PAYMENT_IDENTIFIER]: { info: { id: 'short' } } }))).toEqual([
      { path: '/paymentPayload/extensions/payment-identifier/info/id', message: 'must NOT have fewer than 16 characters' },
    ]);
  });

  it('a payment without the extension (or with others only) has no id', () => {
    expect(paymentIdOf(undefined)).toBeUndefined();
    expect(paymentIdOf({ bazaar: { info: {} } })).toBeUndefined();
    expect(paymentIdOf({ [PAYMENT_IDENTIFIER]: { info: { required: true } } })).toBeUndefined();
  });
});

describe('eip2612GasSponsoring extension schema', () => {
  const permit = {
    from: '0x' + '11'.repeat(20),
    asset: '0x' + '22'.repeat(20),
    spender: '0x000000000022D473030F116dDEE9F6B43aC78BA3',
    amount: '10000',
    nonce: '0',
    deadline: '1900000000',
    signature: '0x' + 'ab'.repeat(65),
    version: '1',
  };
  const declared = declareEip2612GasSponsoringExtension();

  it("takes the server's declaration echoed back, and a permit merged over it as @x402/core's client sends it", () => {
    expect(problemsOf(requestWith(declared))).toEqual([]);
    const merged = { eip2612GasSponsoring: { ...declared.eip2612GasSponsoring, info: { ...declared.eip2612GasSponsoring.info, ...permit } } };
    expect(problemsOf(requestWith(merged))).toEqual([]);
  });

  it('bounds every field of a permit, and takes none without all of them', () => {
    const info = (over: Record<string, unknown>) => ({ eip2612GasSponsoring: { info: { ...permit, ...over } } });
    expect(problemsOf(requestWith(info({ signature: '0x' + 'ab'.repeat(4096) })))[0].path).toBe('/paymentPayload/extensions/eip2612GasSponsoring/info/signature');
    expect(problemsOf(requestWith(info({ amount: '1'.repeat(79) })))[0].path).toBe('/paymentPayload/extensions/eip2612GasSponsoring/info/amount');
    expect(problemsOf(requestWith(info({ spender: 'permit2' })))[0].path).toBe('/paymentPayload/extensions/eip2612GasSponsoring/info/spender');
    expect(problemsOf(requestWith(info({ description: 'x'.repeat(1025) })))[0].path).toBe('/paymentPayload/extensions/eip2612GasSponsoring/info/description');
    const { signature: _dropped, ...unsigned } = permit;
    expect(problemsOf(requestWith({ eip2612GasSponsoring: { info: unsigned } }))).toContainEqual({ path: '/paymentPayload/extensions/eip2612GasSponsoring/info/signature', message: 'is required' });
  });
});

describe('settlement lookup query', () => {
  const network = 'eip155:84532';
  it('takes exactly one key', () => {
    expect(validateSettlementLookupQuery({ network, payment_id: 'pay_0123456789abcdef' })).toBeTruthy();
    expect(validateSettlementLookupQuery({ network, transaction: '0x' + 'c'.repeat(64) })).toBeTruthy();
    expect(validateSettlementLookupQuery({ network, payer: authorization.from, nonce: authorization.nonce })).toBeTruthy();
  });

  it.each([
    ['no key', { network }],
    ['two keys', { network, payment_id: 'pay_0123456789abcdef', transaction: '0x' + 'c'.repeat(64) }],
    ['a payer without its nonce', { network, payer: authorization.from }],
  ])('refuses %s with a clear message', (_name, query) => {
    expect(() => validateSettlementLookupQuery(query)).toThrow(InvalidRequestError);
    try {
      validateSettlementLookupQuery(query);
    } catch (err) {
      expect((err as InvalidRequestError).details!.errors).toContainEqual({ path: '', message: 'give network and exactly one key: payment_id, transaction, or payer with nonce' });
    }
  });

  it('refuses bad hex, wrong lengths and unknown fields', () => {
    expect(() => validateSettlementLookupQuery({ network, transaction: '0x' + 'z'.repeat(64) })).toThrow(InvalidRequestError);
    expect(() => validateSettlementLookupQuery({ network, transaction: '0x' + 'c'.repeat(63) })).toThrow(InvalidRequestError);
    expect(() => validateSettlementLookupQuery({ network, payer: '0x12', nonce: authorization.nonce })).toThrow(InvalidRequestError);
    expect(() => validateSettlementLookupQuery({ network, payment_id: 'pay_0123456789abcdef', id: 'x' })).toThrow(InvalidRequestError);
    expect(() => validateSettlementLookupQuery({ network, payment_id: ['pay_0123456789abcdef', 'pay_0123456789abcdeg'] })).toThrow(InvalidRequestError);
  });
});
