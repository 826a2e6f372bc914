import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/** A raw 32-byte Ed25519 public key as node:crypto takes it. */
export function ed25519PublicKeyObject(publicKey: Uint8Array): KeyObject {
  if (publicKey.length !== 32) throw new Error(`an Ed25519 public key is 32 bytes, not ${publicKey.length}`);
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' });
}

/** Whether `signature` is `publicKey`'s Ed25519 signature of `message` (RFC 8032, as Solana checks it). */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return signature.length === 64 && verify(null, message, ed25519PublicKeyObject(publicKey), signature);
}
