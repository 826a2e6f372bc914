import { AbiCoder, concat, getBytes, keccak256, recoverAddress, Signature, toUtf8Bytes } from 'ethers';

/** What a stored transaction row says may be signed for it, whatever nonce and fees it is signed with. */
export interface AuthenticatedFields {
  settlementId: string;
  purpose: string;
  chainId: number;
  /** lowercase */
  from: string;
  to: string;
  data: string;
  gasLimit: bigint;
}

// EIP-191 version 0x00 ("data with intended validator") with no validator: no transaction, typed-data message
// or personal message hashes to a digest of this shape, so the signature authenticates a row and nothing else
const DOMAIN = concat([new Uint8Array([0x19, 0x00]), new Uint8Array(20), toUtf8Bytes('x402-facilitator chain transaction row v1')]);

/**
 * The digest a row's sending key signs when the row is stored (its `authenticator`). A row read back from the
 * database without a signed version is signed only when its authenticator recovers to its sender over its own
 * fields: a database writer (a compromised API process) holds no key, so it can neither insert a row nor change
 * one's target, calldata or gas and have it signed (issue 40). The nonce is not covered: it is allocated by the
 * same statement that stores the row; a writer moving a row to another nonce can only have the same call sent
 * again, as it could by rewinding a settlement's state.
 */
export function rowDigest(f: AuthenticatedFields): Uint8Array {
  const fields = AbiCoder.defaultAbiCoder().encode(
    ['string', 'string', 'uint256', 'address', 'address', 'bytes', 'uint256'],
    [f.settlementId, f.purpose, f.chainId, f.from, f.to, f.data, f.gasLimit],
  );
  return getBytes(keccak256(concat([DOMAIN, fields])));
}

/** Whether the row's authenticator is its sender's signature over its fields. */
export function isAuthentic(fields: AuthenticatedFields, authenticator: string | null): boolean {
  if (!authenticator) return false;
  try {
    return recoverAddress(rowDigest(fields), Signature.from(authenticator)).toLowerCase() === fields.from.toLowerCase();
  } catch {
    return false;
  }
}
