// Requests for a payment from a payer the test controls by other means than the devnet payer's key (a
// contract wallet, an ERC-6492 wallet not deployed yet): its authorization to the devnet merchant for the
// test price, and the Form B verify body of a signature over it.
import { randomBytes } from 'node:crypto';
import { hexlify } from 'ethers';
import { authorizationToJson, type TransferAuthorization } from '@facilitator/core';
import type { Devnet } from '@facilitator/evm-devnet';
import { PRICE_UNITS } from './test-stack';

/** `payer` pays the devnet merchant the test price, valid for an hour, with a fresh nonce. */
export function authorizationFrom(devnet: Devnet, payer: string): TransferAuthorization {
  return {
    from: payer,
    to: devnet.accounts.merchant.address,
    value: PRICE_UNITS,
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
    nonce: hexlify(randomBytes(32)),
  };
}

/** The Form B (x402Version 1) verify body of `authorization` signed with `signature`. */
export function formBVerifyRequest(devnet: Devnet, authorization: TransferAuthorization, signature: string) {
  return {
    transaction_hash: authorization.nonce,
    chain: 'layer2-sepolia',
    seller_address: devnet.accounts.merchant.address,
    expected_amount: PRICE_UNITS.toString(),
    expected_token: devnet.token,
    metadata: { paymentPayload: { x402Version: 1, scheme: 'exact', network: 'layer2-sepolia', payload: { authorization: authorizationToJson(authorization), signature } } },
  };
}
