import { encodeCall, uintWord } from '@facilitator/evm-chain';
import type { ApprovalPermit } from '../mechanism';
import { splitEip2612Signature } from './eip2612';
import type { ProxySettlement } from './x402-proxy';

// x402's Permit2 proxies' entry points, encoded and read by hand as the token's calls are: every argument
// before the signature is a static word (the structs are static tuples), then the signature's offset and
// the signature. settleWithPermit is settle with the payer's EIP-2612 permit (five words) in front.

/** The types of settleWithPermit's EIP-2612 permit and of the Permit2 permit both proxies take. */
export const EIP2612_PERMIT = '(uint256,uint256,bytes32,bytes32,uint8)';
export const PERMIT = '((address,uint256),uint256,uint256)';
const EIP2612_PERMIT_WORDS = 5;

/** A proxy's `settle(...)` as `head` words (the static arguments in order) then `signature`. */
export function proxyCalldata(selector: string, head: readonly string[], signature: string): string {
  return encodeCall(selector, [...head, uintWord((head.length + 1) * 32), ...bytesWords(signature)]);
}

/** settleWithPermit's first argument, `EIP2612Permit(value, deadline, r, s, v)`: five static words. */
export function eip2612PermitWords(permit: ApprovalPermit): string[] {
  const { r, s, v } = splitEip2612Signature(permit.signature);
  return [uintWord(permit.value), uintWord(permit.deadline), uintWord(BigInt(r)), uintWord(BigInt(s)), uintWord(BigInt(v))];
}

/**
 * A proxy's settle (`head`, then the signature), or, given the payer's permit for Permit2, its
 * settleWithPermit: the same arguments after the permit's five words.
 */
export function proxySettleCalldata(layout: Pick<ProxyCallLayout, 'settle' | 'settleWithPermit'>, head: readonly string[], signature: string, permit?: ApprovalPermit): string {
  return permit ? proxyCalldata(layout.settleWithPermit, [...eip2612PermitWords(permit), ...head], signature) : proxyCalldata(layout.settle, head, signature);
}

/** The length word and the bytes, right-padded to whole words. */
function bytesWords(hex: string): string[] {
  const body = hex.slice(2).toLowerCase();
  const padded = body.padEnd(Math.ceil(body.length / 64) * 64, '0');
  return [uintWord(body.length / 2), ...(padded.match(/.{64}/g) ?? [])];
}

/**
 * Where a proxy's settle keeps what it settles: its two selectors, how many static words precede the
 * signature's offset, and the word of each field (the permit's token and nonce are words 0 and 2 in both).
 */
export interface ProxyCallLayout {
  settle: string;
  settleWithPermit: string;
  words: number;
  owner: number;
  /** the word of the amount moved */
  amount: number;
  to: number;
}

/** The permit a transaction's calldata hands a proxy of this layout; undefined for anything else. */
export function readProxyCall(calldata: string, layout: ProxyCallLayout): ProxySettlement | undefined {
  const selector = calldata.slice(0, 10).toLowerCase();
  const first = selector === layout.settle ? 0 : selector === layout.settleWithPermit ? EIP2612_PERMIT_WORDS : undefined;
  if (first === undefined) return undefined;
  if (calldata.length < 10 + (first + layout.words) * 64) return undefined;
  const word = (i: number) => calldata.slice(10 + (first + i) * 64, 10 + (first + i + 1) * 64);
  const address = (i: number) => '0x' + word(i).slice(24).toLowerCase();
  const uint = (i: number) => BigInt('0x' + word(i));
  return { token: address(0), amount: uint(layout.amount), nonce: uint(2), owner: address(layout.owner), to: address(layout.to) };
}
