import { id, Interface } from 'ethers';
import { addressWord, bytes32Word, encodeCall, uintWord } from '@facilitator/evm-chain';
import type { TransferAuthorization } from '@facilitator/core';

/**
 * EIP-3009's calls on the token (Circle's FiatTokenV2_2), as a human-readable ABI. Both
 * `transferWithAuthorization` overloads are listed: the `bytes signature` one is cheaper (about 79k gas
 * against 96k) and also accepts ERC-1271 smart-wallet signatures. With overloads, ethers needs the full
 * signature to pick one, e.g. `token[TRANSFER_WITH_AUTHORIZATION_BYTES]`.
 */
export const EIP3009_TOKEN_ABI = [
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
] as const;

export const TRANSFER_WITH_AUTHORIZATION_VRS =
  'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)';
export const TRANSFER_WITH_AUTHORIZATION_BYTES =
  'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)';

export const eip3009TokenInterface = new Interface(EIP3009_TOKEN_ABI);

// the (v, r, s) overload is encoded by hand: every argument is a static 32-byte word (see evm-chain's token-calldata)
const VRS_SELECTOR = id(TRANSFER_WITH_AUTHORIZATION_VRS).slice(0, 10);

/**
 * The token's `transferWithAuthorization` calldata. The (v, r, s) overload for a 65-byte ECDSA signature
 * whose v is 27 or 28 (cheaper, and the token packs it back into the very same bytes); the `bytes` overload,
 * with the signature exactly as signed, for everything else. A contract wallet's 65-byte signature may carry
 * any v (a Safe uses 0, 1 and 31+ for its own signature kinds): the token hands those bytes to the wallet's
 * ERC-1271 check unchanged, which is what verification asked the wallet too, so verify and settle agree on
 * every signature.
 */
export function transferWithAuthorizationData(auth: TransferAuthorization, signature: string): string {
  if (isPlainEcdsaSignature(signature)) {
    const { v, r, s } = splitSignature(signature);
    return encodeCall(VRS_SELECTOR, [
      addressWord(auth.from), addressWord(auth.to), uintWord(auth.value), uintWord(auth.validAfter), uintWord(auth.validBefore),
      bytes32Word(auth.nonce), uintWord(v), r, s,
    ]);
  }
  const args = [auth.from, auth.to, auth.value, auth.validAfter, auth.validBefore, auth.nonce];
  return eip3009TokenInterface.encodeFunctionData(TRANSFER_WITH_AUTHORIZATION_BYTES, [...args, signature]);
}

/** 65 bytes with v 27 or 28: what USDC's ECRecover accepts from an ordinary key. */
function isPlainEcdsaSignature(signature: string): boolean {
  if (signature.length !== 2 + 65 * 2) return false;
  const v = parseInt(signature.slice(130, 132), 16);
  return v === 27 || v === 28;
}

/**
 * r, s and v of a 65-byte signature, v as 27 or 28. A high s is passed on as it is (as ethers did): the
 * pre-flight dry run reports the token's own revert for it, before any fee.
 */
export function splitSignature(signature: string): { v: number; r: string; s: string } {
  const hex = signature.slice(2).toLowerCase();
  const r = hex.slice(0, 64);
  const s = hex.slice(64, 128);
  const rawV = parseInt(hex.slice(128, 130), 16);
  const v = rawV < 27 ? rawV + 27 : rawV;
  if (v !== 27 && v !== 28) throw new Error(`invalid signature v ${rawV}`);
  return { v, r, s };
}
