import Ajv from 'ajv';
import { registeredMechanisms } from '@facilitator/payment-mechanisms';
import { mechanismExtensionSchemas, payerFieldsDescription, x402PayloadSchema } from './mechanism-payloads';

// one payload of each registered mechanism's shape, as x402 clients send them (the fields' values do not matter here)
const A = '0x' + '1'.repeat(40);
const permit2Authorization = (witness: object) => ({ from: A, permitted: { token: A, amount: '1' }, spender: A, nonce: '1', deadline: '1', witness });
const SAMPLES: unknown[] = [
  { authorization: { from: A, to: A, value: '1', validAfter: '0', validBefore: '1', nonce: '0x' + '3'.repeat(64) }, signature: '0x' + 'b'.repeat(130) },
  { permit2Authorization: permit2Authorization({ to: A, validAfter: '0' }), signature: '0x' + 'b'.repeat(130) },
  { permit2Authorization: permit2Authorization({ to: A, facilitator: A, validAfter: '0' }), signature: '0x' + 'b'.repeat(130) },
];

const ajv = new Ajv({ strict: true, strictRequired: false, allowUnionTypes: true });
const v2 = registeredMechanisms().filter((m) => m.x402Versions.includes(2));
/** the mechanism whose payload schema a payload is checked against: the one whose marker it matches, else the default */
const chosen = (payload: unknown) => {
  const marked = v2.filter((m) => m.payloadMarker !== undefined && ajv.validate(m.payloadMarker, payload));
  expect(marked.length).toBeLessThanOrEqual(1);
  return marked[0] ?? v2.find((m) => m.payloadMarker === undefined);
};

describe('payload schemas composed from the registered mechanisms', () => {
  it.each(SAMPLES.map((payload, i) => [i, payload]))('checks payload %i against the schema of the mechanism that claims it, which takes it', (_i, payload) => {
    const mechanism = chosen(payload)!;
    expect(mechanism.claims(payload)).toBe(true);
    expect(ajv.validate(mechanism.payloadSchema, payload)).toBe(true);
    expect(ajv.validate(x402PayloadSchema(2), payload)).toBe(true);
  });

  it('gives every registered mechanism of x402 v2 a sample, and at most one of them no marker', () => {
    expect(new Set(SAMPLES.map((payload) => chosen(payload)!.id))).toEqual(new Set(v2.map((m) => m.id)));
    expect(v2.filter((m) => m.payloadMarker === undefined).length).toBeLessThanOrEqual(1);
  });

  it('takes the one mechanism of x402 v1 as it is', () => {
    const v1 = registeredMechanisms().filter((m) => m.x402Versions.includes(1));
    expect(v1).toHaveLength(1);
    expect(x402PayloadSchema(1)).toBe(v1[0].payloadSchema);
  });

  it('lists each extension a mechanism reads once, and names each payer field once', () => {
    const keys = registeredMechanisms().flatMap((m) => (m.x402?.extensions ?? []).map((e) => e.key));
    expect(Object.keys(mechanismExtensionSchemas())).toEqual([...new Set(keys)]);
    expect(payerFieldsDescription().split(', or ')).toEqual([...new Set(registeredMechanisms().map((m) => m.vocabulary.payer))]);
  });
});
