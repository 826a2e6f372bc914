import { UPTO_PERMIT2 } from '@facilitator/core';
import { tokenSignature } from '@facilitator/chain-rpc';
import type { PaymentMechanism } from '../mechanism';
import { PERMIT2_ADDRESS, X402_UPTO_PERMIT2_PROXY } from '../permit2/addresses';
import { permit2Approval } from '../permit2/allowance';
import { permit2Fingerprint } from '../permit2/fingerprint';
import { isPermit2NonceUsed } from '../permit2/nonce-bitmap';
import { permit2DomainSeparator, permitWitnessDigest, recoverPermit2Signer, structHash } from '../permit2/eip712';
import { storedPermit2Transfer } from '../permit2/payload';
import { findProxyExecution } from '../permit2/proxy-execution';
import { proxyProblem } from '../permit2/proxy-deployment';
import { paidThroughProxy } from '../permit2/proxy-transfer';
import { permit2PaymentOf } from '../permit2/terms';
import { PERMIT2_VOCABULARY } from '../permit2/vocabulary';
import { amountToSettle } from '../settle-amount';
import { isUptoPermit2Payload, parseUptoPermit2, type UptoPermit2Payload } from './parse';
import { UPTO_PROXY } from './proxy';
import { uptoSettleCalldata } from './proxy-calldata';

/** The upto proxy's witness, as `@x402/evm`'s client signs it: the recipient, the one sender, the first second. */
const WITNESS_TYPE = 'Witness(address to,address facilitator,uint256 validAfter)';

/**
 * `upto` through Permit2: the payer signs, under Permit2's domain, a transfer of at most a maximum of a token
 * that x402's upto proxy may move, with a witness binding the recipient, the facilitator (the only address
 * whose call the proxy accepts) and a start time. The merchant later settles an amount up to the maximum;
 * the proxy's settle takes it as an argument, and Permit2 spends the nonce whatever the amount, so the rest
 * of the maximum can never be taken. Nonces, approvals and recovery are Permit2's, as for exact.
 *
 * Registered, served on no network: the settle intake does not take an amount yet, the fee rule for an amount
 * below the maximum is undecided, and the call must be sent from the facilitator the payer named
 * (docs/decisions.md, "`upto` through Permit2: the mechanism, not yet served").
 */
export const uptoPermit2: PaymentMechanism<UptoPermit2Payload> = {
  id: UPTO_PERMIT2,
  scheme: 'upto',
  claims: isUptoPermit2Payload,
  parse: (payload, path) => parsedOf(parseUptoPermit2(payload, path)),
  vocabulary: PERMIT2_VOCABULARY,
  requiredSpender: X402_UPTO_PERMIT2_PROXY,
  ownDomainSeparator: (network) => permit2DomainSeparator(network.chainId),
  toStored: (p) => storedPermit2Transfer(p, { facilitator: p.facilitator }),
  fromStored: (stored) => parsedOf(parseUptoPermit2(stored, '')),
  signedDigest: (p, separator) =>
    permitWitnessDigest(separator, p, WITNESS_TYPE, structHash(WITNESS_TYPE, [{ address: p.to }, { address: p.facilitator }, { uint: p.validAfter }])),
  recoverSigner: recoverPermit2Signer,
  fingerprint: (p, network) => permit2Fingerprint(UPTO_PERMIT2, p, network, [p.facilitator]),
  nonceSpace: () => PERMIT2_ADDRESS,
  // terms.amount is the maximum: the merchant names the amount at settle
  signedAmount: 'maximum',
  // later: extra.facilitatorAddress, the sender clients must name (the reference's getExtra)
  describe: () => ({ scheme: 'upto' }),
  isUsed: isPermit2NonceUsed,
  unavailable: (chain) => proxyProblem(UPTO_PROXY, chain),
  // Permit2 takes the settled amount from the payer's approval; verify holds the maximum against it
  approval: ({ terms }, chain) => permit2Approval(terms.token, terms.payer, chain),
  directCall(payment, _chain, settle) {
    const amount = amountToSettle(uptoPermit2, payment.terms, settle);
    return {
      to: X402_UPTO_PERMIT2_PROXY,
      // Permit2 knows nothing of ERC-6492: the wallet, deployed first, checks its own signature
      data: uptoSettleCalldata(payment.payload, amount, tokenSignature(payment.payload.signature)),
      gasKind: 'x402UptoPermit2Proxy.settle',
      // the proxy reverts (UnauthorizedFacilitator) a call from anyone but the witness's facilitator
      sender: payment.payload.facilitator,
    };
  },
  paidIn: (logs, payment) => paidThroughProxy(X402_UPTO_PERMIT2_PROXY, logs, payment),
  findExecution: (payment, chain) => findProxyExecution(UPTO_PROXY, payment, chain),
};

const parsedOf = (p: UptoPermit2Payload) => permit2PaymentOf(UPTO_PERMIT2, 'upto', p);

export { type UptoPermit2Payload } from './parse';
