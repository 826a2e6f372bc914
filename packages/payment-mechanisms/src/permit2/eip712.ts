import { bytesToHex, hexToBytes, keccak256, signatureRecovery, writeBytes, writeUint } from '@facilitator/core';
import type { SignerRecovery } from '../mechanism';
import { typedDataDigest } from '../typed-data-digest';
import { PERMIT2_ADDRESS } from './addresses';

/**
 * Permit2's EIP-712 hashing, written out as the EIP-3009 one is: the domain (name "Permit2", no version),
 * and `PermitWitnessTransferFrom` with a witness type of the proxy's, which Permit2 appends to its stub.
 * Checked against ethers' `TypedDataEncoder` with `@x402/evm`'s own types in the tests, and against the
 * contract on the devnet.
 */

const utf8 = new TextEncoder();
const hash = (text: string) => keccak256(utf8.encode(text));
const DOMAIN_TYPEHASH = hash('EIP712Domain(string name,uint256 chainId,address verifyingContract)');
const TOKEN_PERMISSIONS_TYPE = 'TokenPermissions(address token,uint256 amount)';
const TOKEN_PERMISSIONS_TYPEHASH = hash(TOKEN_PERMISSIONS_TYPE);

/** Permit2's domain separator on a chain (it is the same contract at the same address everywhere). */
export function permit2DomainSeparator(chainId: number): Uint8Array {
  const words = new Uint8Array(4 * 32);
  words.set(DOMAIN_TYPEHASH, 0);
  words.set(hash('Permit2'), 32);
  writeUint(words, 2, BigInt(chainId));
  writeBytes(words, 3, PERMIT2_ADDRESS, 20);
  return keccak256(words);
}

/** What a `PermitWitnessTransferFrom` signs besides its witness. */
export interface PermitTransfer {
  token: string;
  amount: bigint;
  spender: string;
  nonce: bigint;
  deadline: bigint;
}

/**
 * The digest of a `PermitWitnessTransferFrom` whose witness type is `witnessType` (e.g. "Witness(address
 * to,uint256 validAfter)") and whose witness hashes to `witnessHash`.
 */
export function permitWitnessDigest(separator: Uint8Array, permit: PermitTransfer, witnessType: string, witnessHash: Uint8Array): Uint8Array {
  const typeHash = hash(`PermitWitnessTransferFrom(TokenPermissions permitted,address spender,uint256 nonce,uint256 deadline,Witness witness)${TOKEN_PERMISSIONS_TYPE}${witnessType}`);
  const permitted = new Uint8Array(3 * 32);
  permitted.set(TOKEN_PERMISSIONS_TYPEHASH, 0);
  writeBytes(permitted, 1, permit.token, 20);
  writeUint(permitted, 2, permit.amount);
  const struct = new Uint8Array(6 * 32);
  struct.set(typeHash, 0);
  struct.set(keccak256(permitted), 32);
  writeBytes(struct, 2, permit.spender, 20);
  writeUint(struct, 3, permit.nonce);
  writeUint(struct, 4, permit.deadline);
  struct.set(witnessHash, 5 * 32);
  return typedDataDigest(separator, keccak256(struct));
}

/** keccak256(typehash ‖ words): a witness struct's hash, its fields already ABI-encoded as 32-byte words. */
export function structHash(type: string, fields: Array<{ address: string } | { uint: bigint }>): Uint8Array {
  const words = new Uint8Array((fields.length + 1) * 32);
  words.set(hash(type), 0);
  fields.forEach((field, i) => ('address' in field ? writeBytes(words, i + 1, field.address, 20) : writeUint(words, i + 1, field.uint)));
  return keccak256(words);
}

const LOW_255_BITS = (1n << 255n) - 1n;

/**
 * The signer of a digest as Permit2's SignatureVerification recovers it from an account without code:
 * 65 bytes (r ‖ s ‖ v) or 64 (EIP-2098: r ‖ vs), ecrecover with no rule on s (unlike USDC), and v 27 or 28
 * (ecrecover gives the zero address otherwise, which Permit2 refuses).
 */
export function recoverPermit2Signer(digest: Uint8Array, signature: string): SignerRecovery {
  const sig = hexToBytes(signature);
  let rs: Uint8Array;
  let v: number;
  if (sig.length === 65) {
    rs = sig.subarray(0, 64);
    v = sig[64];
  } else if (sig.length === 64) {
    const vs = BigInt(bytesToHex(sig.subarray(32, 64)));
    rs = new Uint8Array(64);
    rs.set(sig.subarray(0, 32), 0);
    rs.set(hexToBytes((vs & LOW_255_BITS).toString(16).padStart(64, '0')), 32);
    v = Number(vs >> 255n) + 27;
  } else {
    return { ok: false, reason: `signature is ${sig.length} bytes; Permit2 takes 65 (r, s, v) or 64 (EIP-2098)` };
  }
  if (v !== 27 && v !== 28) return { ok: false, reason: `signature 'v' value ${v} is not 27 or 28` };
  const publicKey = signatureRecovery.recoverPublicKey(rs, v - 27, digest);
  if (!publicKey) return { ok: false, reason: 'no public key recovers from this signature' };
  return { ok: true, address: bytesToHex(keccak256(publicKey.subarray(1)).subarray(12)) };
}
