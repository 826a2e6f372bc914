import { addressWord, uintWord } from '@facilitator/evm-chain';
import type { ApprovalPermit } from '../mechanism';
import { EIP2612_PERMIT, PERMIT, proxySettleCalldata, readProxyCall, type ProxyCallLayout } from '../permit2/proxy-calldata';
import { selectorOf } from '../permit2/selector';
import type { ProxySettlement } from '../permit2/x402-proxy';
import type { UptoPermit2Payload } from './parse';

// x402UptoPermit2Proxy's two entry points: exact's, with the amount to settle after the permit and the
// facilitator in the witness. Checked against ethers with @x402/evm's ABI and the devnet double's in the tests.

const WITNESS = '(address,address,uint256)';

/** settle(permit, amount, owner, witness, signature): permit words 0-3, amount 4, owner 5, witness 6-8 */
const UPTO_PROXY_CALL: ProxyCallLayout = {
  settle: selectorOf(`settle(${PERMIT},uint256,address,${WITNESS},bytes)`),
  settleWithPermit: selectorOf(`settleWithPermit(${EIP2612_PERMIT},${PERMIT},uint256,address,${WITNESS},bytes)`),
  words: 9,
  owner: 5,
  // the amount argument, not the permitted maximum: what the proxy moves
  amount: 4,
  to: 6,
};

/**
 * settle(permit, amount, owner, witness, signature): `amount` of the payer's permitted maximum to the witness's
 * recipient; given the payer's EIP-2612 permit for Permit2, settleWithPermit(permit2612, ...) instead.
 */
export function uptoSettleCalldata(p: UptoPermit2Payload, amount: bigint, signature: string, permit2612?: ApprovalPermit): string {
  const head = [
    addressWord(p.token),
    uintWord(p.amount),
    uintWord(p.nonce),
    uintWord(p.deadline),
    uintWord(amount),
    addressWord(p.from),
    addressWord(p.to),
    addressWord(p.facilitator),
    uintWord(p.validAfter),
  ];
  return proxySettleCalldata(UPTO_PROXY_CALL, head, signature, permit2612);
}

/**
 * The permit a transaction's calldata hands the upto proxy (settle, or settleWithPermit with its EIP-2612
 * permit first), with the amount it settles; undefined for anything else.
 */
export function uptoProxySettlementOf(calldata: string): ProxySettlement | undefined {
  return readProxyCall(calldata, UPTO_PROXY_CALL);
}
