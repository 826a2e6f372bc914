import { addressWord, decodeUint, encodeCall, uintWord } from '@facilitator/evm-chain';
import type { ContractReads } from '../chain-port';
import type { NonceIdentity } from '../mechanism';
import { selectorOf } from './selector';

const NONCE_BITMAP = selectorOf('nonceBitmap(address,uint256)');

/**
 * Whether Permit2 will refuse this nonce: its bit in the payer's unordered-nonce bitmap (word nonce >> 8,
 * bit nonce & 0xff) is set by a transfer that used it, and by the payer's invalidateUnorderedNonces alike.
 * `space` is the Permit2 contract the nonce belongs to.
 */
export async function isPermit2NonceUsed(nonce: NonceIdentity, chain: Pick<ContractReads, 'readContract'>): Promise<boolean> {
  const value = BigInt(nonce.value);
  const word = await chain.readContract(nonce.space, encodeCall(NONCE_BITMAP, [addressWord(nonce.payer), uintWord(value >> 8n)]));
  return ((decodeUint(word) >> (value & 0xffn)) & 1n) === 1n;
}
