import { Signature, computeAddress, getAddress, getBytes, hexlify, recoverAddress, toBeHex, toBigInt, type BytesLike } from 'ethers';
import { nativeSecp256k1 } from './secp256k1-native';

/** The order of secp256k1's group. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N >> 1n;

function scalar(value: BytesLike | bigint, name: string): bigint {
  const n = typeof value === 'bigint' ? value : toBigInt(getBytes(value));
  if (n <= 0n || n >= SECP256K1_N) throw new Error(`the signature's ${name} is not in [1, n-1]`);
  return n;
}

function recovered(digest: Uint8Array, r: string, s: string, recid: number): string {
  if (!nativeSecp256k1) return recoverAddress(digest, Signature.from({ r, s, v: 27 + recid }));
  try {
    const publicKey = nativeSecp256k1.ecdsaRecover(getBytes(r + s.slice(2)), recid, digest, false);
    return computeAddress(hexlify(publicKey));
  } catch {
    // no point has this x coordinate with this parity: not the recovery id
    return '';
  }
}

/**
 * The Ethereum signature of `digest` from a bare ECDSA (r, s), as a KMS or an HSM returns it: s is moved
 * to the low half of the group (EIP-2; both halves verify, only the low one is accepted on chain) and v is
 * found by trying both recovery ids against the address the key's public key gave. When neither recovers
 * that address, the key that signed is not the key we think it is: that throws, never a wrong v.
 */
export function recoverableSignature(digest: BytesLike, r: BytesLike | bigint, s: BytesLike | bigint, expectedAddress: string): Signature {
  const digestBytes = getBytes(digest);
  if (digestBytes.length !== 32) throw new Error(`a digest is 32 bytes, not ${digestBytes.length}`);
  const rValue = scalar(r, 'r');
  const sValue = scalar(s, 's');
  const rHex = toBeHex(rValue, 32);
  const sHex = toBeHex(sValue > HALF_N ? SECP256K1_N - sValue : sValue, 32);
  const expected = getAddress(expectedAddress);
  for (const recid of [0, 1]) {
    if (recovered(digestBytes, rHex, sHex, recid) === expected) return Signature.from({ r: rHex, s: sHex, v: 27 + recid });
  }
  throw new Error(`the signature recovers to ${expected} with neither v = 27 nor v = 28: the key that signed is not the key this address was derived from`);
}

/** Whether s is in the low half (EIP-2), the only form Ethereum accepts. */
export function isLowS(signature: Signature): boolean {
  return BigInt(signature.s) <= HALF_N;
}
