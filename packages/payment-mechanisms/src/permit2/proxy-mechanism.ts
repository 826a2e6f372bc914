import type { EvmExecution, PaymentMechanism } from '../mechanism';
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
export type Permit2ProxyMembers<P extends Permit2Transfer> = Pick<
  PaymentMechanism<P>,
  'vocabulary' | 'signature' | 'nonce' | 'approval' | 'availability' | 'evmExecution' | 'gas' | 'executor'
>;

/**
 * The members the Permit2 mechanisms share, for `proxy`, the digest its witness makes (`signedDigest`) and the
 * proxy call each makes (`directCall`):
 * Permit2's domain and recovery, its nonce bitmap and the payer's allowance to it (one approval behind every
 * payment of the payer's, or the EIP-2612 permit for it a payment carries), the proxy as the spender a
 * permit must name, its deployment check, its transfers and the search for who called it, the gas its permit
 * adds and the executor's slot for the proxy.
 */
export function permit2ProxyMembers<P extends Permit2Transfer>(
  proxy: X402Permit2Proxy,
  signedDigest: (payload: P, domainSeparator: Uint8Array) => Uint8Array,
  directCall: EvmExecution<P>['directCall'],
): Permit2ProxyMembers<P> {
  return {
    vocabulary: PERMIT2_VOCABULARY,
    signature: {
      ownDomainSeparator: (network) => permit2DomainSeparator(network.chainId),
      signedDigest,
      recoverSigner: recoverPermit2Signer,
    },
    nonce: { space: () => PERMIT2_ADDRESS, isUsed: isPermit2NonceUsed },
    availability: { unavailable: (chain) => proxyProblem(proxy, chain) },
    approval: {
      spender: PERMIT2_ADDRESS,
      signedSpender: proxy.address,
      read: ({ terms, payload }, chain) => permit2Approval(terms.token, terms.payer, chain, payload.permit),
      // x402's eip2612GasSponsoring: the payer's EIP-2612 permit for Permit2, sent with the payment when short
      permit: (payload) => payload.permit,
    },
    evmExecution: {
      directCall,
      paidIn: (logs, payment) => paidThroughProxy(proxy.address, logs, payment),
      findExecution: (payment, chain) => findProxyExecution(proxy, payment, chain),
    },
    // the call that sends the payer's approval permit runs the token's permit before the proxy's settle
    gas: { extra: ({ withPermit }) => (withPermit ? EIP2612_PERMIT_GAS : 0n) },
    executor: { targets: () => ({ [proxy.executorSlot]: proxy.address }) },
  };
}
