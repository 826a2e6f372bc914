import { addressWord, encodeCall, uintWord } from '@facilitator/chain-rpc';
import { selectorOf } from '../permit2/selector';
import type { ExactPermit2Payload } from './parse';

// x402ExactPermit2Proxy's two entry points, encoded and read by hand as the token's calls are: every argument
// before the signature is a static word (the structs are static tuples), then the signature's offset.
// Checked against ethers with @x402/evm's ABI in the tests.

const PERMIT = '((address,uint256),uint256,uint256)';
const WITNESS = '(address,uint256)';
const SETTLE = selectorOf(`settle(${PERMIT},address,${WITNESS},bytes)`);
const SETTLE_WITH_PERMIT = selectorOf(`settleWithPermit((uint256,uint256,bytes32,bytes32,uint8),${PERMIT},address,${WITNESS},bytes)`);

/** settle(permit, owner, witness, signature): the payer's permit for the proxy, moved whole to the witness's recipient. */
export function settleCalldata(p: ExactPermit2Payload, signature: string): string {
  const head = [addressWord(p.token), uintWord(p.amount), uintWord(p.nonce), uintWord(p.deadline), addressWord(p.from), addressWord(p.to), uintWord(p.validAfter)];
  return encodeCall(SETTLE, [...head, uintWord((head.length + 1) * 32), ...bytesWords(signature)]);
}

/** The length word and the bytes, right-padded to whole words. */
function bytesWords(hex: string): string[] {
  const body = hex.slice(2).toLowerCase();
  const padded = body.padEnd(Math.ceil(body.length / 64) * 64, '0');
  return [uintWord(body.length / 2), ...(padded.match(/.{64}/g) ?? [])];
}

/** What a call of the exact proxy settles: whose nonce it spends, and what it moves to whom. */
export interface ProxySettlement {
  owner: string;
  token: string;
  amount: bigint;
  nonce: bigint;
  to: string;
}

/**
 * The permit a transaction's calldata hands the exact proxy (settle, or settleWithPermit with its EIP-2612
 * permit first); undefined for anything else.
 */
export function proxySettlementOf(calldata: string): ProxySettlement | undefined {
  const selector = calldata.slice(0, 10).toLowerCase();
  // settleWithPermit's EIP-2612 permit takes the first five words
  const first = selector === SETTLE ? 0 : selector === SETTLE_WITH_PERMIT ? 5 : undefined;
  if (first === undefined) return undefined;
  const word = (i: number) => calldata.slice(10 + (first + i) * 64, 10 + (first + i + 1) * 64);
  if (calldata.length < 10 + (first + 7) * 64) return undefined;
  const address = (i: number) => '0x' + word(i).slice(24).toLowerCase();
  const uint = (i: number) => BigInt('0x' + word(i));
  return { token: address(0), amount: uint(1), nonce: uint(2), owner: address(4), to: address(5) };
}
