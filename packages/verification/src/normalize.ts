import { AmountFormatError, InvalidRequestError, parsePrice, TOKEN_DECIMALS } from '@facilitator/core';
import { mechanismFor, mechanismsOn, uintAt } from '@facilitator/payment-mechanisms';
import { paymentIdOf, type FormARequest, type FormBVerifyRequest, type RequirementsBody } from '@facilitator/schemas';
import type { EnabledNetworks } from './networks';
import type { Payment } from './payment';

function invalid(path: string, message: string): InvalidRequestError {
  return new InvalidRequestError('invalid request', { errors: [{ path, message }] });
}


/** The amount the merchant asked for: `price`, else `amount` (x402 v2), else `maxAmountRequired` (x402 v1). */
function expectedAmountOf(requirements: RequirementsBody): bigint {
  const candidates: Array<[string, bigint]> = [];
  try {
    if (requirements.price !== undefined) candidates.push(['price', parsePrice(requirements.price, TOKEN_DECIMALS)]);
  } catch (err) {
    if (err instanceof AmountFormatError) throw invalid('/requirements/price', err.message);
    throw err;
  }
  if (requirements.amount !== undefined) candidates.push(['amount', uintAt(requirements.amount, '/requirements/amount')]);
  if (requirements.maxAmountRequired !== undefined) {
    candidates.push(['maxAmountRequired', uintAt(requirements.maxAmountRequired, '/requirements/maxAmountRequired')]);
  }
  const [first] = candidates;
  const disagreeing = candidates.find(([, value]) => value !== first[1]);
  if (disagreeing) throw invalid(`/requirements/${disagreeing[0]}`, `disagrees with ${first[0]}`);
  return first[1];
}

function expectedTokenOf(requirements: RequirementsBody): string | undefined {
  const { token, asset } = requirements;
  if (token && asset && token.toLowerCase() !== asset.toLowerCase()) throw invalid('/requirements/asset', 'disagrees with token');
  return (token ?? asset)?.toLowerCase();
}

export function paymentFromFormA(body: FormARequest, networks: EnabledNetworks, surface: Payment['surface']): Payment {
  const { payment, requirements } = body;
  const network = networks.fromCaip2(requirements.network);
  if (payment.network !== undefined && payment.network !== requirements.network) {
    throw invalid('/payment/network', 'disagrees with requirements.network');
  }
  return {
    protocolVersion: 2,
    surface,
    network,
    networkName: requirements.network,
    ...payloadOf(payment.payload, '/payment/payload', network),
    expected: {
      payTo: requirements.payTo.toLowerCase(),
      amount: expectedAmountOf(requirements),
      token: expectedTokenOf(requirements),
    },
    paymentId: paymentIdOf(payment.extensions),
    request: body,
  };
}

/**
 * The signed part of a `scheme` payload at `path`, read by the network's mechanism of that scheme that claims
 * its shape: the mechanism, the terms, the normalized payload and the signature. Every form the spec defines
 * carries EIP-3009 `exact` (`{ authorization, signature }`, which the schemas have checked); x402 v2 also
 * Permit2 `exact` and `upto`.
 */
export function payloadOf(
  payload: unknown,
  path: string,
  network: { chainId: number; tokenAddress: string },
  scheme = 'exact',
  extensions?: unknown,
): Pick<Payment, 'mechanism' | 'terms' | 'payload' | 'signature'> {
  const mechanisms = mechanismsOn(network.chainId);
  const mechanism = mechanismFor(scheme, mechanisms, payload);
  if (!mechanism) throw invalid(path, `is not an ${JSON.stringify(scheme)} payment this network settles (${mechanisms.join(', ') || 'none'})`);
  // x402 v2's extensions, beside the payload: a Permit2 payment's approval permit (eip2612GasSponsoring)
  return { mechanism, ...mechanism.parse(payload, path, network, extensions) };
}

/**
 * Largest free-form `metadata` (everything but the signed `paymentPayload`), as JSON, in bytes: it is
 * stored with the verification and its settlement, so a stranger must not be able to make rows large.
 */
const MAX_METADATA_BYTES = 4096;

function checkMetadataSize(metadata: Record<string, unknown>): void {
  const { paymentPayload: _signed, ...freeForm } = metadata;
  const bytes = Buffer.byteLength(JSON.stringify(freeForm), 'utf8');
  if (bytes > MAX_METADATA_BYTES) {
    throw invalid('/metadata', `is ${bytes} bytes of JSON besides paymentPayload; at most ${MAX_METADATA_BYTES} are accepted`);
  }
}

export function paymentFromFormB(body: FormBVerifyRequest, networks: EnabledNetworks): Payment {
  checkMetadataSize(body.metadata);
  const network = networks.fromLegacyName(body.chain);
  const paymentPayload = body.metadata.paymentPayload;
  if (networks.fromLegacyName(paymentPayload.network).chainId !== network.chainId) {
    throw invalid('/metadata/paymentPayload/network', 'disagrees with chain');
  }
  const payload = payloadOf(paymentPayload.payload, '/metadata/paymentPayload/payload', network);
  // Form B is EIP-3009's (the spec): its transaction hash is the authorization's nonce
  if (body.transaction_hash.toLowerCase() !== payload.terms.nonce.value) {
    throw invalid('/transaction_hash', 'must be the authorization nonce');
  }
  return {
    protocolVersion: 1,
    surface: 'v1',
    network,
    networkName: body.chain,
    ...payload,
    expected: {
      payTo: body.seller_address.toLowerCase(),
      amount: uintAt(body.expected_amount, '/expected_amount'),
      token: body.expected_token.toLowerCase(),
    },
    metadata: body.metadata,
    webhookUrl: body.webhook_url,
    // metadata is stored in its own column: not a second time inside the request
    request: { ...body, metadata: undefined },
  };
}
