import type { Request } from 'express';
import { InvalidRequestError } from '@facilitator/core';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The merchant a `/v1/merchants/:address/…` path names, lowercase; a malformed one is a 400. */
export function merchantOfPath(req: Request): string {
  const address = String(req.params.address);
  if (!ADDRESS.test(address)) {
    throw new InvalidRequestError('the path must name the merchant address (0x + 40 hex)', { errors: [{ path: '/address', message: 'must be a 20-byte 0x-prefixed hex address' }] });
  }
  return address.toLowerCase();
}
