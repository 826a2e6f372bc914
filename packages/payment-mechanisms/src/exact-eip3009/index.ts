import type { PaymentMechanism } from '../mechanism';
import { amountToSettle } from '../settle-amount';
import { recoverAuthorizationSigner, transferAuthorizationDigest } from './eip712';
import { authorizationFingerprint } from './fingerprint';
import { isExactEip3009Payload, parseExactEip3009, type ExactEip3009Payload } from './parse';
import { eip3009PaymentOf, storedAuthorizationOf } from './payment';
import { exactEip3009PayloadSchema } from './payload-schema';
import { authorizationUse, isAuthorizationUsed, paidByTransfers, transferWithAuthorizationCall } from './settlement-calls';
import { EXACT_EIP3009 } from '../mechanism-ids';

/**
 * `exact` through EIP-3009 `transferWithAuthorization`: the payer signs, under the token's own EIP-712
 * domain, a transfer of an exact value to the payee, usable between two times, once per (token, payer,
 * nonce). The token checks the signature (USDC's ECRecover, or ERC-1271 for an account with code).
 */
export const exactEip3009: PaymentMechanism<ExactEip3009Payload> = {
  id: EXACT_EIP3009,
  family: 'evm',
  scheme: 'exact',
  claims: isExactEip3009Payload,
  parse(payload, path, network) {
    const { authorization, signature } = parseExactEip3009(payload, path);
    return eip3009PaymentOf(authorization, signature, network);
  },
  vocabulary: { payer: 'authorization.from', payee: 'authorization.to', amount: 'authorization.value', checker: 'USDC' },
  toStored: ({ authorization: a, signature }) => ({
    authorization: { from: a.from, to: a.to, value: a.value.toString(), validAfter: a.validAfter.toString(), validBefore: a.validBefore.toString(), nonce: a.nonce },
    signature,
  }),
  fromStored(stored, network) {
    const { authorization, signature } = parseExactEip3009(stored, '');
    return eip3009PaymentOf(authorization, signature, network);
  },
  // checked by the token under its own domain (no ownDomainSeparator: the chain reader pins the token's)
  signature: {
    signedDigest: (payload, separator) => transferAuthorizationDigest(separator, payload.authorization),
    recoverSigner: recoverAuthorizationSigner,
  },
  fingerprint: (payload, network) => authorizationFingerprint(network.chainId, network.tokenAddress, payload.authorization),
  // the token records its authorizations' nonces
  nonce: { space: (network) => network.tokenAddress, isUsed: isAuthorizationUsed },
  signedAmount: 'exact',
  x402Versions: [1, 2],
  // no marker: a payload of no other mechanism's shape is EIP-3009's (the reference's default)
  payloadSchema: exactEip3009PayloadSchema,
  describe: () => ({ scheme: 'exact' }),
  evmExecution: {
    directCall(payment, chain, settle) {
      // the token moves the signed value: an order for any other amount is refused, never settled as this one
      amountToSettle(exactEip3009, payment.terms, settle);
      return transferWithAuthorizationCall(payment, chain);
    },
    paidIn: paidByTransfers,
    findExecution: authorizationUse,
  },
  // its direct call is the token's own: the executor's `token`
  executor: { targets: (network) => ({ token: network.tokenAddress }) },
  storedFromColumns: storedAuthorizationOf,
};

export { type ExactEip3009Payload } from './parse';
export { eip3009PaymentOf } from './payment';
