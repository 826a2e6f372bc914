import type { NetworkConfig } from '@facilitator/config';
import { InvalidRequestError, UnsupportedNetworkError } from '@facilitator/core';
import { knownSchemes, registeredMechanisms, uintAt, type PaymentMechanism } from '@facilitator/payment-mechanisms';
import {
  findJsonProblem,
  paymentIdOf,
  validateX402RequestV1,
  validateX402RequestV2,
  type X402Eip712Extra,
} from '@facilitator/schemas';
import type { EnabledNetworks } from './networks';
import { payloadOf } from './normalize';
import type { Payment } from './payment';
import { X402Reason } from './x402-reasons';

/** The EIP-712 domain a request claims for the token (`extra.name` / `extra.version`); either may be absent. */
export interface ClaimedDomain {
  name?: string;
  version?: string;
  /** where in the request it was claimed, for the message */
  path: string;
}

/** A standard x402 verify/settle request, understood: the engine's Payment plus what the answers echo. */
export interface X402Payment {
  x402Version: 1 | 2;
  payment: Payment;
  /** the network as the request named it (`eip155:84532`, `base-sepolia`), echoed in settle answers */
  network: string;
  /** the payer as the client wrote it (where its mechanism's payload names it: `vocabulary.payer`) */
  payer: string;
  claimedDomains: ClaimedDomain[];
}

/** A request the x402 endpoints cannot take, with the standard reason code to answer with. */
export class X402RequestRejected extends Error {
  constructor(
    /** a generic `X402Reason`, or a mechanism's own code */
    readonly reason: string,
    message: string,
    /** best effort, for the answer's `payer` and `network` */
    readonly payer?: string,
    readonly network?: string,
  ) {
    super(message);
    this.name = 'X402RequestRejected';
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const stringAt = (v: unknown, ...keys: string[]): string | undefined => {
  let node = v;
  for (const key of keys) node = isObject(node) ? node[key] : undefined;
  return typeof node === 'string' ? node : undefined;
};

/** Where each mechanism's payload names its payer (`vocabulary.payer`, e.g. `a.from`), each once, in registration order. */
const PAYER_PATHS = [...new Set(registeredMechanisms().map((m) => m.vocabulary.payer))].map((path) => path.split('.'));

/**
 * What an answer can say about a request it could not read: the payer and network, if present. The payer is
 * read where the first mechanism whose payload names one there names it (the payload is not yet read).
 */
export function x402RequestEcho(body: unknown): { payer?: string; network?: string } {
  let payer: string | undefined;
  for (const path of PAYER_PATHS) payer ??= stringAt(body, 'paymentPayload', 'payload', ...path);
  return { payer, network: stringAt(body, 'paymentRequirements', 'network') };
}

/**
 * Reads a standard x402 facilitator request (`{ x402Version, paymentPayload, paymentRequirements }`,
 * version 1 or 2) into the engine's Payment. Throws X402RequestRejected with the specification's code
 * for a request that is malformed, names another scheme or network, or contradicts itself.
 */
export function parseX402Request(body: unknown, networks: EnabledNetworks): X402Payment {
  const echo = x402RequestEcho(body);
  const reject = (reason: string, message: string) => new X402RequestRejected(reason, message, echo.payer, echo.network);
  if (!isObject(body)) throw reject(X402Reason.InvalidPayload, 'the request body must be a JSON object');
  const problem = findJsonProblem(body);
  if (problem) throw reject(X402Reason.InvalidPayload, problem.message);

  const version = x402VersionOf(body, reject);
  const requirements = body.paymentRequirements;
  const scheme = stringAt(requirements, 'scheme');
  const known = knownSchemes(version);
  if (scheme !== undefined && !known.includes(scheme)) {
    throw reject(X402Reason.UnsupportedScheme, `scheme ${JSON.stringify(scheme)} is not supported in x402 v${version}; this facilitator settles ${known.map((s) => JSON.stringify(s)).join(', ')}`);
  }
  try {
    return version === 2 ? fromV2(body, networks, reject, echo.payer) : fromV1(body, networks, reject, echo.payer);
  } catch (err) {
    if (err instanceof X402RequestRejected) throw err;
    if (err instanceof InvalidRequestError) throw reject(reasonOfProblems(err), messageOfProblems(err));
    throw err;
  }
}

type Reject = (reason: string, message: string) => X402RequestRejected;

function x402VersionOf(body: Json, reject: Reject): 1 | 2 {
  const inPayload = isObject(body.paymentPayload) ? body.paymentPayload.x402Version : undefined;
  const outer = body.x402Version;
  if (inPayload !== undefined && outer !== undefined && inPayload !== outer) {
    throw reject(X402Reason.InvalidX402Version, `x402Version ${JSON.stringify(outer)} disagrees with paymentPayload.x402Version ${JSON.stringify(inPayload)}`);
  }
  const version = inPayload ?? outer;
  if (version === undefined) throw reject(X402Reason.InvalidX402Version, 'x402Version is missing; send 1 or 2 (at the top of the body or in paymentPayload)');
  if (version !== 1 && version !== 2) {
    throw reject(X402Reason.InvalidX402Version, `x402Version ${JSON.stringify(version)} is not supported; send 1 or 2`);
  }
  return version;
}

function reasonOfProblems(err: InvalidRequestError): X402Reason {
  const problems = (err.details?.errors as Array<{ path: string }> | undefined) ?? [];
  const first = problems[0]?.path ?? '';
  if (first.startsWith('/paymentRequirements')) return X402Reason.InvalidPaymentRequirements;
  if (first === '/x402Version' || first === '/paymentPayload/x402Version') return X402Reason.InvalidX402Version;
  return X402Reason.InvalidPayload;
}

function messageOfProblems(err: InvalidRequestError): string {
  const problems = (err.details?.errors as Array<{ path: string; message: string }> | undefined) ?? [];
  if (problems.length === 0) return err.message;
  return `${err.message}: ${problems.slice(0, 5).map((p) => `${p.path || '(body)'} ${p.message}`).join('; ')}`;
}

function claimOf(extra: X402Eip712Extra | null | undefined, path: string): ClaimedDomain[] {
  if (!extra || (extra.name === undefined && extra.version === undefined)) return [];
  return [{ name: extra.name, version: extra.version, path }];
}

function resolveNetwork(name: string, resolve: () => NetworkConfig, reject: Reject): NetworkConfig {
  try {
    return resolve();
  } catch (err) {
    if (err instanceof UnsupportedNetworkError) {
      const supported = (err.details?.supported as string[] | undefined) ?? [];
      throw reject(X402Reason.InvalidNetwork, `network ${JSON.stringify(name)} is not supported here; supported: ${supported.join(', ') || 'none'}`);
    }
    throw err;
  }
}

/** `payer`: the payer as the client wrote it (the request's echo), answered back as written */
function fromV2(body: Json, networks: EnabledNetworks, reject: Reject, payer: string | undefined): X402Payment {
  const request = validateX402RequestV2(body);
  const { paymentPayload, paymentRequirements: requirements } = request;
  const accepted = paymentPayload.accepted;
  if (accepted.scheme !== requirements.scheme) {
    throw reject(X402Reason.InvalidScheme, `paymentPayload.accepted.scheme ${JSON.stringify(accepted.scheme)} disagrees with paymentRequirements.scheme`);
  }
  if (accepted.network !== requirements.network) {
    throw reject(X402Reason.InvalidNetwork, `paymentPayload.accepted.network ${JSON.stringify(accepted.network)} disagrees with paymentRequirements.network ${JSON.stringify(requirements.network)}`);
  }
  for (const field of ['asset', 'payTo'] as const) {
    if (accepted[field].toLowerCase() !== requirements[field].toLowerCase()) {
      throw reject(X402Reason.InvalidPayload, `paymentPayload.accepted.${field} disagrees with paymentRequirements.${field}`);
    }
  }
  const network = resolveNetwork(requirements.network, () => networks.fromCaip2(requirements.network), reject);
  const signed = payloadOf(paymentPayload.payload, '/paymentPayload/payload', network, requirements.scheme, paymentPayload.extensions);
  const amounts = amountsOf(signed.mechanism, uintAt(accepted.amount, '/paymentPayload/accepted/amount'), uintAt(requirements.amount, '/paymentRequirements/amount'), reject);
  return {
    x402Version: 2,
    network: requirements.network,
    payer: payer ?? signed.terms.payer,
    claimedDomains: [
      ...claimOf(requirements.extra, 'paymentRequirements.extra'),
      ...claimOf(accepted.extra, 'paymentPayload.accepted.extra'),
    ],
    payment: {
      protocolVersion: 2,
      surface: 'x402',
      network,
      networkName: requirements.network,
      ...signed,
      expected: {
        payTo: requirements.payTo.toLowerCase(),
        amount: amounts.signed,
        token: requirements.asset.toLowerCase(),
      },
      ...(amounts.settle === undefined ? {} : { settleAmount: amounts.settle }),
      paymentId: paymentIdOf(paymentPayload.extensions),
      request: { x402Version: 2, paymentPayload, paymentRequirements: requirements },
    },
  };
}

/**
 * What an x402 v2 payment must sign, and what it settles. `exact`: the accepted amount is the requirements'.
 * `upto`: the payer signed the maximum the merchant accepted (`accepted.amount`, which verify holds the
 * permit to); the requirements carry what the merchant settles (the reference's settle reads
 * `paymentRequirements.amount`), at most that maximum. At verify the two are the same.
 */
function amountsOf(mechanism: PaymentMechanism<unknown>, accepted: bigint, required: bigint, reject: Reject): { signed: bigint; settle?: bigint } {
  if (mechanism.signedAmount === 'exact') {
    if (accepted !== required) throw reject(X402Reason.InvalidPayload, 'paymentPayload.accepted.amount disagrees with paymentRequirements.amount');
    return { signed: required };
  }
  if (required > accepted) {
    throw reject(
      // the mechanism's own code for it (the reference's upto has one), else: the requirements are what is wrong
      mechanism.x402?.reasons?.settleAboveSigned ?? X402Reason.InvalidPaymentRequirements,
      `paymentRequirements.amount ${required} is above the maximum the payment was accepted for (paymentPayload.accepted.amount ${accepted})`,
    );
  }
  return { signed: accepted, settle: required };
}

function fromV1(body: Json, networks: EnabledNetworks, reject: Reject, payer: string | undefined): X402Payment {
  const request = validateX402RequestV1(body);
  const { paymentPayload, paymentRequirements: requirements } = request;
  if (paymentPayload.scheme !== requirements.scheme) {
    throw reject(X402Reason.InvalidScheme, `paymentPayload.scheme ${JSON.stringify(paymentPayload.scheme)} disagrees with paymentRequirements.scheme`);
  }
  if (paymentPayload.network !== requirements.network) {
    throw reject(X402Reason.InvalidNetwork, `paymentPayload.network ${JSON.stringify(paymentPayload.network)} disagrees with paymentRequirements.network ${JSON.stringify(requirements.network)}`);
  }
  const network = resolveNetwork(requirements.network, () => networks.fromX402V1Name(requirements.network), reject);
  const signed = payloadOf(paymentPayload.payload, '/paymentPayload/payload', network);
  return {
    x402Version: 1,
    network: requirements.network,
    payer: payer ?? signed.terms.payer,
    claimedDomains: claimOf(requirements.extra, 'paymentRequirements.extra'),
    payment: {
      protocolVersion: 1,
      surface: 'x402',
      network,
      networkName: requirements.network,
      ...signed,
      expected: {
        payTo: requirements.payTo.toLowerCase(),
        amount: uintAt(requirements.maxAmountRequired, '/paymentRequirements/maxAmountRequired'),
        token: requirements.asset.toLowerCase(),
      },
      request: { x402Version: 1, paymentPayload, paymentRequirements: requirements },
    },
  };
}
