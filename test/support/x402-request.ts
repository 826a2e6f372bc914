// The standard x402 v2 facilitator request (`POST /x402/verify`, `/x402/settle`) for a signed authorization,
// as @x402/core's HTTPFacilitatorClient sends it: the requirements twice (`accepted` and
// `paymentRequirements`), the authorization and signature as the payload.
import { authorizationToJson, type TransferAuthorization } from '@facilitator/core';

export interface X402Terms {
  payTo: string;
  /** atomic units */
  amount: bigint | string;
  /** the token */
  asset: string;
  network?: string;
  maxTimeoutSeconds?: number;
  /** the resource the payment is for (`paymentPayload.resource.url`), when the test names one */
  resource?: string;
}

/** `authorization` as JSON (strings) or as the engine's bigint form. */
export function x402V2Request(authorization: TransferAuthorization | Record<string, string>, signature: string, terms: X402Terms) {
  const requirements = {
    scheme: 'exact',
    network: terms.network ?? 'eip155:84532',
    amount: terms.amount.toString(),
    asset: terms.asset,
    payTo: terms.payTo,
    maxTimeoutSeconds: terms.maxTimeoutSeconds ?? 60,
    extra: { name: 'USDC', version: '2' },
  };
  const json = typeof authorization.value === 'bigint' ? authorizationToJson(authorization as TransferAuthorization) : authorization;
  return {
    x402Version: 2,
    paymentPayload: {
      x402Version: 2,
      ...(terms.resource ? { resource: { url: terms.resource } } : {}),
      accepted: requirements,
      payload: { authorization: json, signature },
    },
    paymentRequirements: requirements,
  };
}
