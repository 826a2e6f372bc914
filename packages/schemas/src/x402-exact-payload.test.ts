import type { InvalidRequestError } from '@facilitator/core';
import { validateX402RequestV1, validateX402RequestV2 } from './index';

const PAYER = '0x' + '1'.repeat(40);
const MERCHANT = '0x' + '2'.repeat(40);
const TOKEN = '0x' + '3'.repeat(40);
const requirements = { scheme: 'exact', network: 'eip155:84532', amount: '10000', asset: TOKEN, payTo: MERCHANT, extra: { assetTransferMethod: 'permit2' } };
// as @x402/evm 2.27's client sends it (createPermit2Payload): decimal strings, checksummed or not
const permit2Authorization = {
  from: PAYER,
  permitted: { token: TOKEN, amount: '10000' },
  spender: '0x402085c248EeA27D92E8b30b2C58ed07f9E20001',
  nonce: '33247007178036348590600198031289925668252061821958005840077069883511451257277',
  deadline: '1900000000',
  witness: { to: MERCHANT, validAfter: '1740672089' },
};
const requestWith = (payload: unknown) => ({ x402Version: 2, paymentPayload: { x402Version: 2, accepted: requirements, payload }, paymentRequirements: requirements });

function problemsOf(validate: (body: unknown) => unknown, body: unknown): Array<{ path: string; message: string }> {
  try {
    validate(body);
    return [];
  } catch (err) {
    return (err as InvalidRequestError).details!.errors as Array<{ path: string; message: string }>;
  }
}

describe('x402 exact payloads: EIP-3009 or Permit2, told apart by their shape', () => {
  it('takes a Permit2 payload on x402 v2', () => {
    expect(problemsOf(validateX402RequestV2, requestWith({ permit2Authorization, signature: '0x' + 'b'.repeat(130) }))).toEqual([]);
  });

  it("names the Permit2 field that is wrong, not the EIP-3009 shape's", () => {
    const body = requestWith({ permit2Authorization: { ...permit2Authorization, witness: { validAfter: '0' } }, signature: '0x' + 'b'.repeat(130) });
    expect(problemsOf(validateX402RequestV2, body)).toEqual([{ path: '/paymentPayload/payload/permit2Authorization/witness/to', message: 'is required' }]);
    const eip3009 = requestWith({ authorization: {}, signature: '0x' + 'b'.repeat(130) });
    expect(problemsOf(validateX402RequestV2, eip3009)).toContainEqual({ path: '/paymentPayload/payload/authorization/from', message: 'is required' });
    expect(JSON.stringify(problemsOf(validateX402RequestV2, eip3009))).not.toContain('permit2');
  });

  it('bounds every field: no extra fields, numbers as uint256 strings, a capped signature', () => {
    const extra = requestWith({ permit2Authorization: { ...permit2Authorization, facilitator: MERCHANT }, signature: '0x' + 'b'.repeat(130) });
    expect(problemsOf(validateX402RequestV2, extra).length).toBeGreaterThan(0);
    const huge = requestWith({ permit2Authorization: { ...permit2Authorization, nonce: '1'.repeat(79) }, signature: '0x' + 'b'.repeat(130) });
    expect(problemsOf(validateX402RequestV2, huge)).toContainEqual(expect.objectContaining({ path: '/paymentPayload/payload/permit2Authorization/nonce' }));
    const long = requestWith({ permit2Authorization, signature: '0x' + 'b'.repeat(2 * 4097) });
    expect(problemsOf(validateX402RequestV2, long)).toContainEqual(expect.objectContaining({ path: '/paymentPayload/payload/signature' }));
  });

  it('keeps x402 v1 to EIP-3009 (the legacy protocol has no Permit2 payload)', () => {
    const v1 = { x402Version: 1, paymentPayload: { x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: { permit2Authorization, signature: '0x' + 'b'.repeat(130) } }, paymentRequirements: { scheme: 'exact', network: 'base-sepolia', maxAmountRequired: '10000', resource: 'https://m.example/r', description: '', mimeType: '', payTo: MERCHANT, maxTimeoutSeconds: 60, asset: TOKEN } };
    expect(problemsOf(validateX402RequestV1, v1).length).toBeGreaterThan(0);
  });
});
