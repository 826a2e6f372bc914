import { InvalidRequestError } from '@facilitator/core';
import { uintAt } from '../exact-eip3009/parse';

/** An exact EVM payload through Permit2, as x402 clients send it (`@x402/evm` 2.27, the `exact` scheme spec). */
interface ExactPermit2Body {
  permit2Authorization: {
    from: string;
    permitted: { token: string; amount: string };
    spender: string;
    nonce: string;
    deadline: string;
    witness: { to: string; validAfter: string };
  };
  signature: string;
}

/** The payload normalized: lowercase addresses and signature, numbers as bigint. */
export interface ExactPermit2Payload {
  from: string;
  token: string;
  amount: bigint;
  /** the contract Permit2 lets move the tokens: x402's exact proxy */
  spender: string;
  /** Permit2's unordered nonce: word nonce >> 8, bit nonce & 0xff of the payer's bitmap */
  nonce: bigint;
  /** the last second the permit may be used (inclusive) */
  deadline: bigint;
  to: string;
  /** the first second the proxy moves it (inclusive) */
  validAfter: bigint;
  signature: string;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX = /^0x([0-9a-fA-F]{2})+$/;

function addressAt(value: unknown, path: string): string {
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

/** Reads a Permit2 payload field by field, naming the path of the first that is not what it must be. */
export function parseExactPermit2(payload: unknown, path: string): ExactPermit2Payload {
  const body = payload as Partial<ExactPermit2Body>;
  const at = `${path}/permit2Authorization`;
  const p = body.permit2Authorization as Partial<ExactPermit2Body['permit2Authorization']> | undefined;
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
    signature: body.signature.toLowerCase(),
  };
}

/** The shape test: a Permit2 authorization whose witness names no facilitator (that one is `upto`'s). */
export function isExactPermit2Payload(payload: unknown): boolean {
  const p = payload as Partial<ExactPermit2Body> | null;
  if (typeof p !== 'object' || p === null || typeof p.permit2Authorization !== 'object' || p.permit2Authorization === null) return false;
  const witness = (p.permit2Authorization as { witness?: unknown }).witness;
  return typeof witness === 'object' && witness !== null && !('facilitator' in witness);
}
