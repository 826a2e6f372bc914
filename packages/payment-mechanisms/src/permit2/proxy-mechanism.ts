import type { PaymentMechanism } from '../mechanism';
import { PERMIT2_ADDRESS } from './addresses';
import { permit2Approval } from './allowance';
import { permit2DomainSeparator, recoverPermit2Signer } from './eip712';
import { EIP2612_PERMIT_GAS } from './eip2612';
import { isPermit2NonceUsed } from './nonce-bitmap';
import type { Permit2Transfer } from './payload';
import { proxyProblem } from './proxy-deployment';
import { findProxyExecution } from './proxy-execution';
import { paidThroughProxy } from './proxy-transfer';
import { PERMIT2_VOCABULARY } from './vocabulary';
import type { X402Permit2Proxy } from './x402-proxy';

/** What a mechanism through one of x402's Permit2 proxies says exactly as the other does, given its proxy. */
export type Permit2ProxyMembers = Pick<
  PaymentMechanism<Permit2Transfer>,
  | 'vocabulary'
  | 'requiredSpender'
  | 'ownDomainSeparator'
  | 'recoverSigner'
  | 'nonceSpace'
  | 'isUsed'
  | 'approval'
  | 'approvalPermit'
  | 'approvalSpender'
  | 'unavailable'
  | 'paidIn'
  | 'findExecution'
  | 'extraGas'
  | 'executorTargets'
>;

/**
 * The members the Permit2 mechanisms share, for `proxy`: Permit2's domain, recovery, nonce bitmap and the
 * payer's allowance to it (one approval behind every payment of the payer's, or the EIP-2612 permit for it a
 * payment carries), the proxy as the spender a
 * permit must name, its deployment check, its transfers and the search for who called it, the gas its permit
 * adds and the executor's slot for the proxy.
 */
export function permit2ProxyMembers(proxy: X402Permit2Proxy): Permit2ProxyMembers {
  return {
    vocabulary: PERMIT2_VOCABULARY,
    requiredSpender: proxy.address,
    ownDomainSeparator: (network) => permit2DomainSeparator(network.chainId),
    recoverSigner: recoverPermit2Signer,
    nonceSpace: () => PERMIT2_ADDRESS,
    isUsed: isPermit2NonceUsed,
    unavailable: (chain) => proxyProblem(proxy, chain),
    approval: ({ terms, payload }, chain) => permit2Approval(terms.token, terms.payer, chain, payload.permit),
    // x402's eip2612GasSponsoring: the payer's EIP-2612 permit for Permit2, sent with the payment when short
    approvalPermit: (payload) => payload.permit,
    approvalSpender: PERMIT2_ADDRESS,
    paidIn: (logs, payment) => paidThroughProxy(proxy.address, logs, payment),
    findExecution: (payment, chain) => findProxyExecution(proxy, payment, chain),
    // the call that sends the payer's approval permit runs the token's permit before the proxy's settle
    extraGas: ({ withPermit }) => (withPermit ? EIP2612_PERMIT_GAS : 0n),
    executorTargets: () => ({ [proxy.executorSlot]: proxy.address }),
  };
}
