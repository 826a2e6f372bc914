import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { UnauthorizedError } from '@facilitator/core';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * When API keys are configured, the request must carry one in X-API-Key. Keys are compared as SHA-256
 * digests in constant time, so neither their content nor their length leaks through timing.
 */
export function requireApiKey(apiKeys: readonly string[]): RequestHandler {
  const digests = apiKeys.map(digest);
  return (req, _res, next) => {
    if (digests.length === 0) return next();
    const presented = req.get('x-api-key');
    const candidate = digest(presented ?? '');
    let matched = false;
    for (const known of digests) matched = timingSafeEqual(known, candidate) || matched;
    next(presented && matched ? undefined : new UnauthorizedError());
  };
}
