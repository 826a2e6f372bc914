import { InvalidRequestError } from '@facilitator/core';
import { SETTLE_FORM_B_FIELDS, VERIFY_FORM_B_FIELDS } from '@facilitator/schemas';
import { formOf } from './request-body';

describe('formOf', () => {
  it('reads payment/requirements as Form A and the flat fields as Form B', () => {
    expect(formOf({ payment: {} }, VERIFY_FORM_B_FIELDS)).toBe('form-a');
    expect(formOf({ requirements: {} }, SETTLE_FORM_B_FIELDS)).toBe('form-a');
    expect(formOf({ chain: 'layer2' }, VERIFY_FORM_B_FIELDS)).toBe('form-b');
    expect(formOf({ verification_id: 'v' }, SETTLE_FORM_B_FIELDS)).toBe('form-b');
  });

  it.each([
    ['{}', {}],
    ['a typo of every field', { paymnet: {}, requirments: {} }],
    ['an inherited name only', JSON.parse('{"__proto__": {"payment": 1}}') as Record<string, unknown>],
  ])('tells a body that fits neither form (%s) what each form needs', (_name, body) => {
    expect(() => formOf(body, VERIFY_FORM_B_FIELDS)).toThrow(InvalidRequestError);
    expect(() => formOf(body, VERIFY_FORM_B_FIELDS)).toThrow(
      'the body fits neither form: Form A sends `payment`, `requirements`; Form B sends `transaction_hash`, `chain`, `seller_address`, `expected_amount`, `expected_token`, `metadata`',
    );
    expect(() => formOf(body, SETTLE_FORM_B_FIELDS)).toThrow('Form B sends `verification_id`, `destination_address`');
  });
});
