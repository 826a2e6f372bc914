// Everything Ethereum signs, built only on Signer.signDigest: one place that turns a key into signed
// transactions, typed data and EIP-7702 authorizations, whatever holds the key.
import {
  Transaction,
  TypedDataEncoder,
  getAddress,
  getBigInt,
  getBytes,
  hashAuthorization,
  type Authorization,
  type AuthorizationRequest,
  type TransactionLike,
  type TypedDataDomain,
  type TypedDataField,
} from 'ethers';
import type { Signer } from './signer';
import { SignerError } from './signer-error';

/**
 * The signed, serialized transaction: the bytes for eth_sendRawTransaction (or eth_sendRawTransactionSync).
 * Any type ethers serializes: 2 (EIP-1559) and 4 (EIP-7702, `authorizationList`) included. `from`, when
 * given, must be the signer's address.
 */
export async function signTransaction(signer: Signer, fields: TransactionLike<string>): Promise<string> {
  const { from, ...unsigned } = fields;
  if (from != null && getAddress(from) !== signer.address) {
    throw new SignerError(signer.description, `asked to sign a transaction from ${getAddress(from)}, but its key is ${signer.address}'s`);
  }
  const tx = Transaction.from(unsigned);
  tx.signature = await signer.signDigest(getBytes(tx.unsignedHash));
  return tx.serialized;
}

/** An EIP-712 signature (65 bytes, hex, v 27/28) of `value` under `domain`. */
export async function signTypedData(
  signer: Signer,
  domain: TypedDataDomain,
  types: Record<string, TypedDataField[]>,
  value: Record<string, unknown>,
): Promise<string> {
  const signature = await signer.signDigest(getBytes(TypedDataEncoder.hash(domain, types, value)));
  return signature.serialized;
}

/**
 * An EIP-7702 authorization delegating the signer's account to `request.address`. Nonce and chain id are
 * not looked up (a signer has no provider): both must be given; chain id 0 means every chain.
 */
export async function signAuthorization(signer: Signer, request: AuthorizationRequest): Promise<Authorization> {
  if (typeof request.address !== 'string') throw new Error('signAuthorization needs the delegate as an address string');
  if (request.nonce == null || request.chainId == null) throw new Error('signAuthorization needs the nonce and the chain id (0 for every chain)');
  const authorization = { address: getAddress(request.address), nonce: getBigInt(request.nonce), chainId: getBigInt(request.chainId) };
  const signature = await signer.signDigest(getBytes(hashAuthorization(authorization)));
  return { ...authorization, signature };
}
