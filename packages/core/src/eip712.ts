import { keccak256 } from './keccak';

/**
 * EIP-712 domains, written out by hand (checked against ethers' `TypedDataEncoder` in the tests), and the
 * EIP-3009 authorization as the service passes it around. What a payer signs and how its signature is
 * recovered belong to each payment mechanism (`@facilitator/payment-mechanisms`).
 */

export interface Eip712Domain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: string;
}

export interface TransferAuthorization {
  from: string;
  to: string;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  /** 32 bytes, 0x hex */
  nonce: string;
}

const utf8 = new TextEncoder();
const DOMAIN_TYPEHASH = keccak256(
  utf8.encode('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'),
);

export function hexToBytes(hex: string): Uint8Array {
  const body = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  return Uint8Array.from(Buffer.from(body, 'hex'));
}

export function bytesToHex(bytes: Uint8Array): string {
  return '0x' + Buffer.from(bytes).toString('hex');
}

export function writeUint(words: Uint8Array, index: number, value: bigint): void {
  let v = value;
  for (let i = index * 32 + 31; i >= index * 32; i--) {
    words[i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

export function writeBytes(words: Uint8Array, index: number, hex: string, length: number): void {
  words.set(hexToBytes(hex), index * 32 + (32 - length));
}

export function domainSeparator(domain: Eip712Domain): Uint8Array {
  const words = new Uint8Array(5 * 32);
  words.set(DOMAIN_TYPEHASH, 0);
  words.set(keccak256(utf8.encode(domain.name)), 32);
  words.set(keccak256(utf8.encode(domain.version)), 64);
  writeUint(words, 3, BigInt(domain.chainId));
  writeBytes(words, 4, domain.verifyingContract, 20);
  return keccak256(words);
}

/** The authorization as it travels in request bodies: numbers as decimal strings. */
export function authorizationToJson(auth: TransferAuthorization) {
  return {
    from: auth.from,
    to: auth.to,
    value: auth.value.toString(),
    validAfter: auth.validAfter.toString(),
    validBefore: auth.validBefore.toString(),
    nonce: auth.nonce,
  };
}
