import { compileValidator } from './validator';
import { exactEvmPayload, MAX_SIGNATURE_BYTES } from './primitives';

const validate = compileValidator<unknown>(exactEvmPayload, 'payload');
const authorization = {
  from: '0x' + '11'.repeat(20),
  to: '0x' + '22'.repeat(20),
  value: '10000',
  validAfter: '0',
  validBefore: '99999999999',
  nonce: '0x' + '33'.repeat(32),
};

describe('the signature cap', () => {
  it(`takes a contract wallet's signature of up to ${MAX_SIGNATURE_BYTES} bytes`, () => {
    expect(() => validate({ authorization, signature: '0x' + 'ab'.repeat(MAX_SIGNATURE_BYTES) })).not.toThrow();
    expect(() => validate({ authorization, signature: '0x' + 'ab'.repeat(65) })).not.toThrow();
  });

  it('refuses a longer one with a problem that names the length (a 400, or x402 invalid_payload)', () => {
    let problems: Array<{ path: string; message: string }> = [];
    try {
      validate({ authorization, signature: '0x' + 'ab'.repeat(MAX_SIGNATURE_BYTES + 1) });
    } catch (error) {
      problems = (error as { details: { errors: typeof problems } }).details.errors;
    }
    expect(problems).toEqual([{ path: '/signature', message: `must NOT have more than ${2 + 2 * MAX_SIGNATURE_BYTES} characters` }]);
  });

  it('still refuses odd-length and empty hex', () => {
    expect(() => validate({ authorization, signature: '0xabc' })).toThrow();
    expect(() => validate({ authorization, signature: '0x' })).toThrow();
  });
});
