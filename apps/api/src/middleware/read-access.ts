import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { UnauthorizedError } from '@facilitator/core';
import type { MerchantService } from '@facilitator/merchants';
import { bearerKey } from '../bearer-key';

/** Who is reading: the operator (an API key), one merchant (its settle key), or anyone. */
export type ReadAccess = { kind: 'operator' } | { kind: 'merchant'; merchant: string } | { kind: 'public' };

const digest = (text: string) => createHash('sha256').update(text).digest();

const ACCESS = Symbol('readAccess');
export function accessOf(req: Request): ReadAccess {
  return (req as unknown as Record<symbol, ReadAccess>)[ACCESS] ?? { kind: 'public' };
}

/**
 * Resolves who reads. `X-API-Key` (one of API_KEYS, compared as SHA-256 digests in constant time) reads
 * everything; `Authorization: Bearer <settle key>` reads the merchant's own records. A key presented but
 * wrong is 401. With neither: public when `openWithoutKeys` and no API keys are configured (the status
 * queries, as before), else 401 (webhook deliveries are never open to the world).
 */
export function readAccess(apiKeys: readonly string[], merchants: MerchantService, openWithoutKeys: boolean): RequestHandler {
  const digests = apiKeys.map(digest);
  return async (req, _res, next) => {
    const apiKey = req.get('x-api-key');
    const bearer = bearerKey(req);
    let access: ReadAccess | undefined;
    if (apiKey !== undefined && digests.length > 0) {
      const candidate = digest(apiKey);
      let matched = false;
      for (const known of digests) matched = timingSafeEqual(known, candidate) || matched;
      if (matched) access = { kind: 'operator' };
    }
    if (!access && bearer !== undefined) {
      const merchant = await merchants.merchantOfSettleKey(bearer);
      if (merchant) access = { kind: 'merchant', merchant };
    }
    if (!access) {
      const presented = (apiKey !== undefined && digests.length > 0) || bearer !== undefined;
      if (presented || digests.length > 0 || !openWithoutKeys) {
        throw new UnauthorizedError('a valid X-API-Key, or the merchant settle key as Authorization: Bearer <key>, is required');
      }
      access = { kind: 'public' };
    }
    (req as unknown as Record<symbol, ReadAccess>)[ACCESS] = access;
    next();
  };
}

/** Whether the reader may see a record of `merchant` (a merchant sees only its own). */
export function maySee(access: ReadAccess, merchant: string | null): boolean {
  return access.kind !== 'merchant' || (merchant !== null && merchant.toLowerCase() === access.merchant);
}
