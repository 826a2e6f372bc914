import { classifyNodeError } from '@facilitator/evm-chain';
import type { ContractReads } from '../chain-port';
import { PERMIT2_ADDRESS } from './addresses';
import { selectorOf } from './selector';
import type { X402Permit2Proxy } from './x402-proxy';

const PERMIT2_GETTER = selectorOf('PERMIT2()');

/**
 * Why one of x402's Permit2 proxies cannot settle on this chain, when it cannot: a call to an address
 * without code succeeds and moves nothing, so a chain where the proxy is missing (or is some other contract,
 * answering another Permit2) must be refused before any fee, never found out from an empty receipt. The
 * reference asks the same (`PERMIT2()`, `permit2_proxy_not_deployed`).
 */
export async function proxyProblem(proxy: Pick<X402Permit2Proxy, 'address' | 'name'>, chain: Pick<ContractReads, 'readContract'>): Promise<string | undefined> {
  let answer: string;
  try {
    answer = await chain.readContract(proxy.address, PERMIT2_GETTER);
  } catch (err) {
    // a revert is an answer (not the proxy); a node that cannot be asked is thrown, to be retried
    if (classifyNodeError(err).category === 'execution_reverted') return `the contract at ${proxy.address} reverts PERMIT2(): not x402's ${proxy.name} Permit2 proxy`;
    throw err;
  }
  const named = answer.length === 66 ? '0x' + answer.slice(26).toLowerCase() : undefined;
  if (named === PERMIT2_ADDRESS) return undefined;
  return answer === '0x'
    ? `x402's ${proxy.name} Permit2 proxy is not deployed at ${proxy.address} on this chain`
    : `the contract at ${proxy.address} does not name Permit2 ${PERMIT2_ADDRESS} (it answers ${answer.slice(0, 66)})`;
}
