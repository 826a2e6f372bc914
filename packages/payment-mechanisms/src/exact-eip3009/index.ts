import { EXACT_EIP3009 } from '@facilitator/core';
import type { MechanismNetwork, ParsedPayment, PaymentMechanism } from '../mechanism';
import { recoverAuthorizationSigner, transferAuthorizationDigest } from './eip712';
import { authorizationFingerprint } from './fingerprint';
import { isExactEip3009Payload, parseExactEip3009, type ExactEip3009Payload } from './parse';
import { authorizationUse, isAuthorizationUsed, paidByTransfers, transferWithAuthorizationCall } from './settlement-calls';

/**
 * `exact` through EIP-3009 `transferWithAuthorization`: the payer signs, under the token's own EIP-712
 * domain, a transfer of an exact value to the payee, usable between two times, once per (token, payer,
 * nonce). The token checks the signature (USDC's ECRecover, or ERC-1271 for an account with code).
 */
export const exactEip3009: PaymentMechanism<ExactEip3009Payload> = {
  id: EXACT_EIP3009,
  scheme: 'exact',
  claims: isExactEip3009Payload,
  parse: (payload, path, network) => parsedOf(parseExactEip3009(payload, path), network),
  toStored: ({ authorization: a, signature }) => ({
    authorization: { from: a.from, to: a.to, value: a.value.toString(), validAfter: a.validAfter.toString(), validBefore: a.validBefore.toString(), nonce: a.nonce },
    signature,
  }),
  fromStored: (stored, network) => parsedOf(parseExactEip3009(stored, ''), network),
  signedDigest: (payload, separator) => transferAuthorizationDigest(separator, payload.authorization),
  recoverSigner: recoverAuthorizationSigner,
  fingerprint: (payload, network) => authorizationFingerprint(network.chainId, network.tokenAddress, payload.authorization),
  describe: () => ({ scheme: 'exact' }),
  isUsed: isAuthorizationUsed,
  directCall: transferWithAuthorizationCall,
  paidIn: paidByTransfers,
  findExecution: authorizationUse,
};

/** A payload with its terms: its nonce is the token's, per payer. */
function parsedOf(payload: ExactEip3009Payload, network: MechanismNetwork): ParsedPayment<ExactEip3009Payload> {
  const a = payload.authorization;
  return {
    terms: {
      mechanism: EXACT_EIP3009,
      scheme: 'exact',
      payer: a.from,
      payee: a.to,
      // the token whose own domain it was signed under: the network's
      token: network.tokenAddress,
      amount: a.value,
      validAfter: a.validAfter,
      validBefore: a.validBefore,
      nonce: { space: network.tokenAddress, payer: a.from, value: a.nonce },
    },
    payload,
    signature: payload.signature,
  };
}

export { type ExactEip3009Payload } from './parse';
