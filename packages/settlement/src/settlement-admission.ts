import { createHmac, timingSafeEqual } from 'node:crypto';
import { AbiCoder, concat, getBytes, keccak256, recoverAddress, Signature, toUtf8Bytes, type SignatureLike } from 'ethers';
import { canonicalJson } from '@facilitator/core';
import type { Settlement } from '@facilitator/db';

/**
 * How this worker seals the settlements it admitted (their pre-flight passed here) and checks a seal read back.
 * The key is one only the worker holds: the treasury's (its signature) or, with OpenZeppelin Relayer, the relayer
 * server's API key (an HMAC, as for stored transaction rows). A database writer (a compromised API process) can
 * insert a settlement row straight into `collect_fee` with a payment nobody signed; without a seal it cannot make,
 * the treasury sends no fee for it (issue 40, review of item 1).
 */
export interface SettlementAdmission {
  seal(digest: Uint8Array): Promise<string>;
  verify(digest: Uint8Array, seal: string): boolean;
}

// EIP-191 version 0x00 with no validator, as the transaction rows' authenticator: no transaction, typed-data or
// personal message hashes to a digest of this shape, so a treasury signature over it admits a settlement and nothing else
const DOMAIN = concat([new Uint8Array([0x19, 0x00]), new Uint8Array(20), toUtf8Bytes('x402-facilitator settlement admission v1')]);

/**
 * What a seal covers: the settlement's id (a seal copied to another row does not verify), its network, merchant,
 * fee, and the payment the pre-flight checked (payer, nonce, amount, its whole payload).
 */
export function admissionDigest(s: Pick<Settlement, 'id' | 'chainId' | 'tokenAddress' | 'merchant' | 'feeAmount' | 'payer' | 'nonceSpace' | 'nonce' | 'amount' | 'mechanism' | 'payload'>): Uint8Array {
  const fields = AbiCoder.defaultAbiCoder().encode(
    ['string', 'uint256', 'string', 'string', 'uint256', 'string', 'string', 'string', 'uint256', 'string', 'bytes32'],
    [
      s.id,
      s.chainId,
      s.tokenAddress.toLowerCase(),
      s.merchant.toLowerCase(),
      BigInt(s.feeAmount),
      s.payer.toLowerCase(),
      s.nonceSpace,
      s.nonce.toLowerCase(),
      BigInt(s.amount),
      s.mechanism,
      keccak256(toUtf8Bytes(canonicalJson(s.payload))),
    ],
  );
  return getBytes(keccak256(concat([DOMAIN, fields])));
}

/** Sealed by the treasury's key (local, KMS or PKCS#11): verified by recovering the treasury's address. */
export function treasuryAdmission(treasury: string, signDigest: (digest: Uint8Array) => Promise<SignatureLike & { serialized: string }>): SettlementAdmission {
  return {
    seal: async (digest) => (await signDigest(digest)).serialized,
    verify: (digest, seal) => {
      try {
        return recoverAddress(digest, Signature.from(seal)).toLowerCase() === treasury.toLowerCase();
      } catch {
        return false;
      }
    },
  };
}

/** Sealed by an HMAC (the relayer server's API key: this worker holds no treasury key to sign with). */
export function hmacAdmission(mac: (digest: Uint8Array) => string): SettlementAdmission {
  return {
    seal: async (digest) => mac(digest),
    verify: (digest, seal) => {
      const expected = Buffer.from(mac(digest));
      const given = Buffer.from(seal);
      return expected.length === given.length && timingSafeEqual(expected, given);
    },
  };
}

/** An HMAC admission under a key of its own (tests). */
export function keyedAdmission(key: string): SettlementAdmission {
  return hmacAdmission((digest) => createHmac('sha256', key).update(digest).digest('hex'));
}
