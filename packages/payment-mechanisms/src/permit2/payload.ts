import { InvalidRequestError } from '@facilitator/core';
import { uintAt } from '../exact-eip3009/parse';
import type { ApprovalPermit, StoredPayload } from '../mechanism';
import { eip2612PermitOf, storedEip2612Permit } from './eip2612';

/**
 * A Permit2 payload as x402 clients send it for either proxy (`@x402/evm` 2.27, the `exact` and `upto`
 * scheme specs): a `PermitWitnessTransferFrom` and its signature. The witness always names the recipient
 * and the first second; a proxy's own witness adds its fields (upto: the facilitator).
 */
interface Permit2Body {
  permit2Authorization: {
    from: string;
    permitted: { token: string; amount: string };
    spender: string;
    nonce: string;
    deadline: string;
    witness: { to: string; validAfter: string } & Record<string, unknown>;
  };
  signature: string;
}

/** What every Permit2 payload signs, normalized: lowercase addresses and signature, numbers as bigint. */
export interface Permit2Transfer {
  from: string;
  token: string;
  /** the amount the permit lets the proxy move (exact: moved whole; upto: the most it may move) */
  amount: bigint;
  /** the contract Permit2 lets move the tokens: one of x402's proxies */
  spender: string;
  /** Permit2's unordered nonce: word nonce >> 8, bit nonce & 0xff of the payer's bitmap */
  nonce: bigint;
  /** the last second the permit may be used (inclusive) */
  deadline: bigint;
  to: string;
  /** the first second the proxy moves it (inclusive) */
  validAfter: bigint;
  signature: string;
  /** the payer's EIP-2612 permit for Permit2 sent with it (x402's `eip2612GasSponsoring`), if any */
  permit?: ApprovalPermit;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX = /^0x([0-9a-fA-F]{2})+$/;

/** a 20-byte address at `path`, lowercase */
export function addressAt(value: unknown, path: string): string {
  if (typeof value !== 'string' || !ADDRESS.test(value)) throw invalid(path, 'must be a 0x-prefixed 20-byte hex address');
  return value.toLowerCase();
}

function numberAt(value: unknown, path: string): bigint {
  if (typeof value !== 'string') throw invalid(path, 'must be a decimal string');
  return uintAt(value, path);
}

function invalid(path: string, message: string): InvalidRequestError {
  return new InvalidRequestError('invalid request', { errors: [{ path, message }] });
}

/**
 * Reads a Permit2 payload field by field, naming the path of the first that is not what it must be. The
 * proxy's own witness fields are read by `ownWitness` from the witness object and its path. `extensions`
 * (the payment's, beside the payload at `path`) may carry the payer's EIP-2612 permit for Permit2.
 */
export function parsePermit2Transfer<Own extends object>(
  payload: unknown,
  path: string,
  ownWitness: (witness: Record<string, unknown>, at: string) => Own,
  extensions?: unknown,
): Permit2Transfer & Own {
  const body = payload as Partial<Permit2Body>;
  const at = `${path}/permit2Authorization`;
  const p = body.permit2Authorization as Partial<Permit2Body['permit2Authorization']> | undefined;
  if (typeof p !== 'object' || p === null) throw invalid(at, 'must be an object');
  if (typeof p.permitted !== 'object' || p.permitted === null) throw invalid(`${at}/permitted`, 'must be an object');
  if (typeof p.witness !== 'object' || p.witness === null) throw invalid(`${at}/witness`, 'must be an object');
  if (typeof body.signature !== 'string' || !HEX.test(body.signature)) throw invalid(`${path}/signature`, 'must be 0x-prefixed hex bytes');
  return {
    from: addressAt(p.from, `${at}/from`),
    token: addressAt(p.permitted.token, `${at}/permitted/token`),
    amount: numberAt(p.permitted.amount, `${at}/permitted/amount`),
    spender: addressAt(p.spender, `${at}/spender`),
    nonce: numberAt(p.nonce, `${at}/nonce`),
    deadline: numberAt(p.deadline, `${at}/deadline`),
    to: addressAt(p.witness.to, `${at}/witness/to`),
    validAfter: numberAt(p.witness.validAfter, `${at}/witness/validAfter`),
    ...ownWitness(p.witness, `${at}/witness`),
    signature: body.signature.toLowerCase(),
    ...permitOf(extensions, path),
  };
}

/** The payment's permit, at the `extensions` beside the payload at `path` (`/paymentPayload/payload` → `/paymentPayload/extensions`). */
function permitOf(extensions: unknown, path: string): { permit?: ApprovalPermit } {
  const permit = eip2612PermitOf(extensions, `${path.slice(0, Math.max(0, path.lastIndexOf('/')))}/extensions`);
  return permit ? { permit } : {};
}

/**
 * A Permit2 payload as it is stored (JSON of strings), in the shape it was sent: `parsePermit2Transfer`
 * reads it back. `ownWitness` holds the proxy's own witness fields, already strings.
 */
export function storedPermit2Transfer(p: Permit2Transfer, ownWitness: Record<string, string> = {}): StoredPayload {
  return {
    permit2Authorization: {
      from: p.from,
      permitted: { token: p.token, amount: p.amount.toString() },
      spender: p.spender,
      nonce: p.nonce.toString(),
      deadline: p.deadline.toString(),
      witness: { to: p.to, ...ownWitness, validAfter: p.validAfter.toString() },
    },
    signature: p.signature,
    // only a payment with a permit has extensions: one without is stored as before, byte for byte
    ...(p.permit ? { extensions: storedEip2612Permit(p.permit) } : {}),
  };
}

/** The extensions a stored Permit2 payload keeps (its permit), to read it back with. */
export function storedExtensionsOf(stored: unknown): unknown {
  return (stored as { extensions?: unknown } | null)?.extensions;
}

/**
 * The witness of a payload shaped as a Permit2 one (`permit2Authorization` with a witness object), whatever
 * its fields; undefined for any other shape. The mechanisms tell their proxies apart by its fields.
 */
export function permit2WitnessOf(payload: unknown): object | undefined {
  const p = payload as Partial<Permit2Body> | null;
  if (typeof p !== 'object' || p === null || typeof p.permit2Authorization !== 'object' || p.permit2Authorization === null) return undefined;
  const witness = (p.permit2Authorization as { witness?: unknown }).witness;
  return typeof witness === 'object' && witness !== null ? witness : undefined;
}
