import { classifyNodeError } from '@facilitator/chain-rpc';
import type { ContractReads } from '../chain-port';
import { PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY } from '../permit2/addresses';
import { selectorOf } from '../permit2/selector';

const PERMIT2_GETTER = selectorOf('PERMIT2()');

/**
 * Why x402's exact proxy cannot settle on this chain, when it cannot: a call to an address without code
 * succeeds and moves nothing, so a chain where the proxy is missing (or is some other contract, answering
 * another Permit2) must be refused before any fee, never found out from an empty receipt. The reference
 * asks the same (`PERMIT2()`, `permit2_proxy_not_deployed`).
 */
export async function exactProxyProblem(chain: Pick<ContractReads, 'readContract'>): Promise<string | undefined> {
  let answer: string;
  try {
    answer = await chain.readContract(X402_EXACT_PERMIT2_PROXY, PERMIT2_GETTER);
  } catch (err) {
    // a revert is an answer (not the proxy); a node that cannot be asked is thrown, to be retried
    if (classifyNodeError(err).category === 'execution_reverted') return `the contract at ${X402_EXACT_PERMIT2_PROXY} reverts PERMIT2(): not x402's exact Permit2 proxy`;
    throw err;
  }
  const named = answer.length === 66 ? '0x' + answer.slice(26).toLowerCase() : undefined;
  if (named === PERMIT2_ADDRESS) return undefined;
  return answer === '0x'
    ? `x402's exact Permit2 proxy is not deployed at ${X402_EXACT_PERMIT2_PROXY} on this chain`
    : `the contract at ${X402_EXACT_PERMIT2_PROXY} does not name Permit2 ${PERMIT2_ADDRESS} (it answers ${answer.slice(0, 66)})`;
}
