import { SigningKey, Wallet, randomBytes, recoverAddress } from 'ethers';
import { SECP256K1_N, isLowS, recoverableSignature } from './recoverable-signature';

const wallet = Wallet.createRandom();
const key = new SigningKey(wallet.privateKey);

describe('recoverableSignature', () => {
  it('moves a high s to the low half and finds v, both recovery ids included', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const digest = randomBytes(32);
      const reference = key.sign(digest);
      const highS = SECP256K1_N - BigInt(reference.s);
      const signature = recoverableSignature(digest, BigInt(reference.r), highS, wallet.address);
      expect(isLowS(signature)).toBe(true);
      expect(signature.serialized).toBe(reference.serialized);
      expect(recoverAddress(digest, signature)).toBe(wallet.address);
      seen.add(signature.v);
    }
    expect([...seen].sort()).toEqual([27, 28]);
  });

  it('throws when neither v recovers the address: the key is not the one we think', () => {
    const digest = randomBytes(32);
    const signature = key.sign(digest);
    const stranger = Wallet.createRandom().address;
    expect(() => recoverableSignature(digest, signature.r, signature.s, stranger)).toThrow(`recovers to ${stranger} with neither v = 27 nor v = 28`);
  });

  it('refuses r or s out of range and a digest that is not 32 bytes', () => {
    const digest = randomBytes(32);
    expect(() => recoverableSignature(digest, 0n, 1n, wallet.address)).toThrow("r is not in [1, n-1]");
    expect(() => recoverableSignature(digest, 1n, SECP256K1_N, wallet.address)).toThrow("s is not in [1, n-1]");
    expect(() => recoverableSignature(randomBytes(31), 1n, 1n, wallet.address)).toThrow('a digest is 32 bytes, not 31');
  });
});
