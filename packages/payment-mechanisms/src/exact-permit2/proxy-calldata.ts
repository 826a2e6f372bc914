import { addressWord, uintWord } from '@facilitator/evm-chain';
import type { ApprovalPermit } from '../mechanism';
import { PERMIT, EIP2612_PERMIT, proxySettleCalldata, readProxyCall, type ProxyCallLayout } from '../permit2/proxy-calldata';
import { selectorOf } from '../permit2/selector';
import type { ProxySettlement } from '../permit2/x402-proxy';
import type { ExactPermit2Payload } from './parse';

// x402ExactPermit2Proxy's two entry points. Checked against ethers with @x402/evm's ABI in the tests.

const WITNESS = '(address,uint256)';

/** settle(permit, owner, witness, signature): permit words 0-3, owner 4, witness 5-6 */
const EXACT_PROXY_CALL: ProxyCallLayout = {
  settle: selectorOf(`settle(${PERMIT},address,${WITNESS},bytes)`),
  settleWithPermit: selectorOf(`settleWithPermit(${EIP2612_PERMIT},${PERMIT},address,${WITNESS},bytes)`),
  words: 7,
  owner: 4,
  // the permitted amount: the exact proxy moves it whole
  amount: 1,
  to: 5,
};

/**
 * settle(permit, owner, witness, signature): the payer's permit for the proxy, moved whole to the witness's
 * recipient; given the payer's EIP-2612 permit for Permit2, settleWithPermit(permit2612, ...) instead.
 */
export function settleCalldata(p: ExactPermit2Payload, signature: string, permit2612?: ApprovalPermit): string {
  const head = [addressWord(p.token), uintWord(p.amount), uintWord(p.nonce), uintWord(p.deadline), addressWord(p.from), addressWord(p.to), uintWord(p.validAfter)];
  return proxySettleCalldata(EXACT_PROXY_CALL, head, signature, permit2612);
}

/**
 * The permit a transaction's calldata hands the exact proxy (settle, or settleWithPermit with its EIP-2612
 * permit first); undefined for anything else.
 */
export function proxySettlementOf(calldata: string): ProxySettlement | undefined {
  return readProxyCall(calldata, EXACT_PROXY_CALL);
}
