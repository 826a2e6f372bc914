import { type TransferAuthorization } from '@facilitator/core';
import type { MechanismNetwork, ParsedPayment, PaymentColumns, StoredPayload } from '../mechanism';
import type { ExactEip3009Payload } from './parse';
import { EXACT_EIP3009 } from '../mechanism-ids';

/**
 * An EIP-3009 payment from its normalized authorization (lowercase addresses, bigint numbers) and the
 * payer's signature: what `parse` gives for a request, and what a client or a test that holds an
 * authorization already builds without a JSON round trip.
 */
export function eip3009PaymentOf(authorization: TransferAuthorization, signature: string, network: MechanismNetwork): ParsedPayment<ExactEip3009Payload> {
  const a = authorization;
  return {
    terms: {
      mechanism: EXACT_EIP3009,
      scheme: 'exact',
      payer: a.from,
      payee: a.to,
      token: network.tokenAddress,
      amount: a.value,
      validAfter: a.validAfter,
      validBefore: a.validBefore,
      // the token records an EIP-3009 nonce (authorizationState)
      nonce: { space: network.tokenAddress, payer: a.from, value: a.nonce },
    },
    payload: { authorization, signature },
    signature,
  };
}

/**
 * The authorization of a settlement stored before payloads were, as the payload column's backfill writes it:
 * EIP-3009 was the only mechanism then, and its row and verification hold every field the payer signed.
 */
export function storedAuthorizationOf(c: PaymentColumns): StoredPayload {
  return {
    authorization: { from: c.payer, to: c.payee, value: c.amount, validAfter: c.validAfter, validBefore: c.validBefore, nonce: c.nonce },
    signature: c.signature,
  };
}
