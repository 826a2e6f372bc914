import { createHash } from 'node:crypto';
import { EXACT_PERMIT2 } from '@facilitator/core';
import { tokenSignature } from '@facilitator/chain-rpc';
import type { ParsedPayment, PaymentMechanism } from '../mechanism';
import { PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY } from '../permit2/addresses';
import { permit2Approval } from '../permit2/allowance';
import { isPermit2NonceUsed } from '../permit2/nonce-bitmap';
import { permit2DomainSeparator, permitWitnessDigest, recoverPermit2Signer, structHash } from '../permit2/eip712';
import { findProxyExecution } from './execution';
import { isExactPermit2Payload, parseExactPermit2, type ExactPermit2Payload } from './parse';
import { settleCalldata } from './proxy-calldata';
import { exactProxyProblem } from './proxy-deployment';
import { paidThroughExactProxy } from './proxy-transfer';

/** The exact proxy's witness: the recipient and the first second the payment may move. */
const WITNESS_TYPE = 'Witness(address to,uint256 validAfter)';

/**
 * `exact` through Permit2 (`extra.assetTransferMethod: "permit2"`): the payer signs, under Permit2's domain,
 * a transfer of an exact amount of a token that x402's exact proxy may move, with a witness binding the
 * recipient and a start time; Permit2 consumes an unordered nonce of the payer's, shared by every token and
 * every spender. The payer has approved Permit2 for the token once (or sends an EIP-2612 permit for it).
 *
 * Served on every network, on the sequential path: the atomic path's executor takes EIP-3009 items only,
 * so a worker settles it with the fee from the treasury's key first, then the proxy's call from a relayer.
 */
export const exactPermit2: PaymentMechanism<ExactPermit2Payload> = {
  id: EXACT_PERMIT2,
  scheme: 'exact',
  claims: isExactPermit2Payload,
  parse: (payload, path) => parsedOf(parseExactPermit2(payload, path)),
  vocabulary: {
    payer: 'permit2Authorization.from',
    payee: 'permit2Authorization.witness.to',
    amount: 'permit2Authorization.permitted.amount',
    spender: 'permit2Authorization.spender',
    checker: 'Permit2',
  },
  requiredSpender: X402_EXACT_PERMIT2_PROXY,
  ownDomainSeparator: (network) => permit2DomainSeparator(network.chainId),
  toStored: (p) => ({
    permit2Authorization: {
      from: p.from,
      permitted: { token: p.token, amount: p.amount.toString() },
      spender: p.spender,
      nonce: p.nonce.toString(),
      deadline: p.deadline.toString(),
      witness: { to: p.to, validAfter: p.validAfter.toString() },
    },
    signature: p.signature,
  }),
  fromStored: (stored) => parsedOf(parseExactPermit2(stored, '')),
  signedDigest: (p, separator) =>
    permitWitnessDigest(separator, p, WITNESS_TYPE, structHash(WITNESS_TYPE, [{ address: p.to }, { uint: p.validAfter }])),
  recoverSigner: recoverPermit2Signer,
  fingerprint(p, network) {
    // prefixed with the mechanism: an EIP-3009 payment's fingerprint can never equal a Permit2 one's
    const text = [EXACT_PERMIT2, network.chainId, PERMIT2_ADDRESS, p.from, p.token, p.amount, p.spender, p.nonce, p.deadline, p.to, p.validAfter]
      .map(String)
      .join(':')
      .toLowerCase();
    return createHash('sha256').update(text, 'utf8').digest('hex');
  },
  nonceSpace: () => PERMIT2_ADDRESS,
  describe: () => ({ scheme: 'exact' }),
  isUsed: isPermit2NonceUsed,
  unavailable: exactProxyProblem,
  approval: ({ terms }, chain) => permit2Approval(terms.token, terms.payer, chain),
  directCall: ({ payload }) => ({
    to: X402_EXACT_PERMIT2_PROXY,
    // Permit2 knows nothing of ERC-6492: the wallet, deployed first, checks its own signature
    data: settleCalldata(payload, tokenSignature(payload.signature)),
    gasKind: 'x402ExactPermit2Proxy.settle',
  }),
  paidIn: (logs, payment) => paidThroughExactProxy(logs, payment),
  findExecution: findProxyExecution,
};

/** A payload with its terms: its nonce is Permit2's, per payer, across every token and spender. */
function parsedOf(p: ExactPermit2Payload): ParsedPayment<ExactPermit2Payload> {
  return {
    terms: {
      mechanism: EXACT_PERMIT2,
      scheme: 'exact',
      payer: p.from,
      payee: p.to,
      token: p.token,
      spender: p.spender,
      amount: p.amount,
      // terms are usable when validAfter < now < validBefore: the proxy moves it from validAfter on, and
      // Permit2 until its deadline included
      validAfter: p.validAfter > 0n ? p.validAfter - 1n : 0n,
      validBefore: p.deadline + 1n,
      nonce: { space: PERMIT2_ADDRESS, payer: p.from, value: '0x' + p.nonce.toString(16).padStart(64, '0') },
    },
    payload: p,
    signature: p.signature,
  };
}

export { type ExactPermit2Payload } from './parse';
