import { createHash } from 'node:crypto';
import { authorizationFingerprint } from './fingerprint';

const base = {
  from: '0x1111111111111111111111111111111111111111',
  to: '0x2222222222222222222222222222222222222222',
  value: 1_000_000n,
  validAfter: 0n,
  validBefore: 1_900_000_000n,
  nonce: `0x${'ab'.repeat(32)}`,
};
const TOKEN = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';

describe('authorizationFingerprint', () => {
  it('is the sha256 of the documented text, which the migration computes in SQL for old rows', () => {
    // SELECT encode(sha256(convert_to('8453:0x8335…:0x1111…:0x2222…:1000000:0:1900000000:0xabab…', 'UTF8')), 'hex')
    const text = `8453:${TOKEN}:${base.from}:${base.to}:1000000:0:1900000000:${base.nonce}`;
    const expected = createHash('sha256').update(text).digest('hex');
    expect(authorizationFingerprint(8453, TOKEN, base)).toBe(expected);
  });

  it('ignores letter case of addresses and nonce', () => {
    const upper = { ...base, from: base.from.toUpperCase().replace('0X', '0x'), nonce: base.nonce.toUpperCase().replace('0X', '0x') };
    expect(authorizationFingerprint(8453, TOKEN.toUpperCase(), upper)).toBe(authorizationFingerprint(8453, TOKEN, base));
  });

  it.each([
    ['recipient', { to: '0x3333333333333333333333333333333333333333' }],
    ['value', { value: 10_000n }],
    ['validAfter', { validAfter: 1n }],
    ['validBefore', { validBefore: 1_900_000_001n }],
    ['nonce', { nonce: `0x${'cd'.repeat(32)}` }],
    ['payer', { from: '0x4444444444444444444444444444444444444444' }],
  ])('differs when the %s differs (same payer and nonce can carry another payment)', (_field, change) => {
    expect(authorizationFingerprint(8453, TOKEN, { ...base, ...change })).not.toBe(authorizationFingerprint(8453, TOKEN, base));
  });

  it('differs across networks and tokens', () => {
    expect(authorizationFingerprint(84532, TOKEN, base)).not.toBe(authorizationFingerprint(8453, TOKEN, base));
    expect(authorizationFingerprint(8453, '0x036cbd53842c5426634e7929541ec2318f3dcf7e', base)).not.toBe(authorizationFingerprint(8453, TOKEN, base));
  });
});
