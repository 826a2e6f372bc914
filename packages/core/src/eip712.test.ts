import { randomBytes, randomInt } from 'node:crypto';
import { SigningKey, TypedDataEncoder, getAddress, hexlify } from 'ethers';
import { bytesToHex, domainSeparator, hexToBytes, type Eip712Domain } from './eip712';
import { ethersRecovery, signatureRecovery } from './signature-recovery';

const randomHex = (bytes: number) => hexlify(randomBytes(bytes));
const randomAddress = () => (randomInt(2) ? getAddress(randomHex(20)) : randomHex(20)); // checksummed or lowercase

function randomDomain(): Eip712Domain {
  const names = ['USDC', 'USD Coin', '', 'Ünïcödé ✓ token', randomHex(randomInt(1, 40))];
  return {
    name: names[randomInt(names.length)],
    version: String(randomInt(1, 10)),
    chainId: [1, 8453, 84532, Number.MAX_SAFE_INTEGER, randomInt(1, 2 ** 48 - 1)][randomInt(5)],
    verifyingContract: randomAddress(),
  };
}

describe('domainSeparator', () => {
  it('equals ethers TypedDataEncoder.hashDomain for random domains', () => {
    for (let i = 0; i < 200; i++) {
      const domain = randomDomain();
      expect({ domain, hash: bytesToHex(domainSeparator(domain)) }).toEqual({ domain, hash: TypedDataEncoder.hashDomain(domain) });
    }
  });
});

describe('signatureRecovery', () => {
  it('uses the native libsecp256k1 binding on this machine', () => {
    expect(signatureRecovery.backend).toBe('libsecp256k1');
    expect(ethersRecovery.backend).toBe('ethers');
  });

  it('agrees with the ethers fallback on random keys and digests', () => {
    for (let i = 0; i < 100; i++) {
      const key = new SigningKey(randomHex(32));
      const digest = randomBytes(32);
      const sig = key.sign(digest);
      const rs = hexToBytes(sig.r + sig.s.slice(2));
      const native = signatureRecovery.recoverPublicKey(rs, sig.yParity, digest);
      const fallback = ethersRecovery.recoverPublicKey(rs, sig.yParity, digest);
      expect(native && bytesToHex(native)).toBe(key.publicKey);
      expect(fallback && bytesToHex(fallback)).toBe(key.publicKey);
      // The other recovery id yields a different key (or none) in both implementations alike.
      const nativeOther = signatureRecovery.recoverPublicKey(rs, 1 - sig.yParity, digest);
      const fallbackOther = ethersRecovery.recoverPublicKey(rs, 1 - sig.yParity, digest);
      expect(nativeOther && bytesToHex(nativeOther)).toBe(fallbackOther && bytesToHex(fallbackOther));
    }
  });

  it('both return null when nothing recovers', () => {
    const digest = randomBytes(32);
    const rZero = new Uint8Array(64);
    rZero.set(randomBytes(32), 32);
    const rOverflow = new Uint8Array(64).fill(0xff);
    for (const rs of [rZero, rOverflow]) {
      expect(signatureRecovery.recoverPublicKey(rs, 0, digest)).toBeNull();
      expect(ethersRecovery.recoverPublicKey(rs, 0, digest)).toBeNull();
    }
  });
});
