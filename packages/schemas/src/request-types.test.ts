import type { FormARequest, FormBVerifyRequest } from './request-types';
import { validateSettleFormB, validateVerifyFormA, validateVerifyFormB } from './index';

// The types come from the schemas: these compile only while the two agree (npm run lint type-checks the tests).
const formA: FormARequest = {
  payment: {
    x402Version: 2,
    payload: {
      authorization: { from: '0x' + '1'.repeat(40), to: '0x' + '2'.repeat(40), value: '10000', validAfter: '0', validBefore: '9999999999', nonce: '0x' + '3'.repeat(64) },
      signature: '0x' + 'ab'.repeat(65),
    },
  },
  requirements: { scheme: 'exact', network: 'eip155:84532', payTo: '0x' + '2'.repeat(40), price: '$0.01' },
};

describe('request types derived from the schemas', () => {
  it('a body typed by them validates', () => {
    expect(validateVerifyFormA(formA)).toEqual(formA);
    const formB: FormBVerifyRequest = {
      transaction_hash: formA.payment.payload.authorization.nonce,
      chain: 'layer2-sepolia',
      seller_address: formA.requirements.payTo,
      expected_amount: '10000',
      expected_token: '0x' + '4'.repeat(40),
      metadata: { paymentPayload: { x402Version: 1, scheme: 'exact', network: 'layer2-sepolia', payload: formA.payment.payload } },
    };
    expect(validateVerifyFormB(formB)).toEqual(formB);
  });

  it('validation returns the typed body or a 400 listing each problem', () => {
    expect(() => validateSettleFormB({ verification_id: '' })).toThrow(/invalid settle request/);
  });
});
