// Calldata and results of the token calls on the settlement hot path, encoded by hand. Every argument of
// these calls is a static 32-byte word, so the ABI encoding is the selector followed by the words; ethers'
// general ABI coder costs about a millisecond per settlement here (measured with the worker's CPU profile).
// token-calldata.test.ts checks each encoder against ethers' Interface byte for byte.
import { id } from 'ethers';

const selector = (signature: string) => id(signature).slice(0, 10);

export const SELECTORS = {
  balanceOf: selector('balanceOf(address)'),
  allowance: selector('allowance(address,address)'),
  authorizationState: selector('authorizationState(address,bytes32)'),
  transferFrom: selector('transferFrom(address,address,uint256)'),
} as const;

/** keccak256("Transfer(address,address,uint256)"): topic 0 of an ERC-20 Transfer event. */
export const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_WORD = /^0x[0-9a-fA-F]{64}$/;

export function addressWord(address: string): string {
  if (!HEX_ADDRESS.test(address)) throw new TypeError(`not an address: ${address}`);
  return '000000000000000000000000' + address.slice(2).toLowerCase();
}

export function uintWord(value: bigint | number): string {
  const big = BigInt(value);
  if (big < 0n || big >= 1n << 256n) throw new RangeError(`not a uint256: ${value}`);
  return big.toString(16).padStart(64, '0');
}

export function bytes32Word(value: string): string {
  if (!HEX_WORD.test(value)) throw new TypeError(`not 32 bytes: ${value}`);
  return value.slice(2).toLowerCase();
}

export function encodeCall(selectorHex: string, words: string[]): string {
  return selectorHex + words.join('');
}

/** `authorizationState(authorizer, nonce)`: asked on every verify and before every settlement. */
export function authorizationStateData(authorizer: string, nonce: string): string {
  return encodeCall(SELECTORS.authorizationState, [addressWord(authorizer), bytes32Word(nonce)]);
}

/** A uint256 (or bool) result: the first 32-byte word of the answer. */
export function decodeUint(result: string): bigint {
  if (!/^0x[0-9a-fA-F]{64,}$/.test(result)) throw new Error(`unexpected call result ${result.slice(0, 80)}`);
  return BigInt(result.slice(0, 66));
}
