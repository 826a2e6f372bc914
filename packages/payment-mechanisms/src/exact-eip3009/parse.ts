import { AmountFormatError, InvalidRequestError, parseAtomicAmount, type TransferAuthorization } from '@facilitator/core';

/** An exact EVM payload through EIP-3009, as the request schemas have checked it. */
interface ExactEip3009Body {
  authorization: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string };
  signature: string;
}

/** The payload normalized: lowercase addresses, nonce and signature, numbers as bigint. */
export interface ExactEip3009Payload {
  authorization: TransferAuthorization;
  signature: string;
}

/** A uint256 decimal string, or a 400 naming its path. */
export function uintAt(text: string, path: string): bigint {
  try {
    return parseAtomicAmount(text);
  } catch (err) {
    if (err instanceof AmountFormatError) throw new InvalidRequestError('invalid request', { errors: [{ path, message: err.message }] });
    throw err;
  }
}

export function parseExactEip3009(payload: unknown, path: string): ExactEip3009Payload {
  const body = payload as ExactEip3009Body;
  const at = `${path}/authorization`;
  const a = body.authorization;
  return {
    authorization: {
      from: a.from.toLowerCase(),
      to: a.to.toLowerCase(),
      value: uintAt(a.value, `${at}/value`),
      validAfter: uintAt(a.validAfter, `${at}/validAfter`),
      validBefore: uintAt(a.validBefore, `${at}/validBefore`),
      nonce: a.nonce.toLowerCase(),
    },
    signature: body.signature.toLowerCase(),
  };
}

/** The shape test: an EIP-3009 authorization and a signature (the registry's choice, not a validation). */
export function isExactEip3009Payload(payload: unknown): boolean {
  const p = payload as Partial<ExactEip3009Body> | null;
  return typeof p === 'object' && p !== null && typeof p.authorization === 'object' && p.authorization !== null && typeof p.signature === 'string';
}
