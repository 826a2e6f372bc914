import { once } from 'node:events';
import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Cluster, Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimitedError } from '@facilitator/core';

/**
 * Per-client request limit for verify and settle, counted in Redis so it holds across every API
 * process and instance. If Redis cannot be asked, requests pass: a limiter must not become an outage.
 */
export function rateLimitPerClient(redis: Redis | Cluster, prefix: string, limit: { max: number; windowMs: number }): RequestHandler {
  const sendCommand = async (...args: string[]): Promise<RedisReply> => {
    // the store loads its scripts at once; wait for the connection rather than fail at start-up
    if (redis.status !== 'ready') await once(redis, 'ready');
    return (await redis.call(args[0], ...args.slice(1))) as RedisReply;
  };
  return rateLimit({
    windowMs: limit.windowMs,
    limit: limit.max,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    passOnStoreError: true,
    store: new RedisStore({ sendCommand, prefix: `${prefix}:ratelimit:` }),
    handler: (req, res, next) => {
      const info = (req as typeof req & { rateLimit?: { resetTime?: Date } }).rateLimit;
      const reset = info?.resetTime?.getTime() ?? Date.now() + limit.windowMs;
      const retryAfter = Math.max(1, Math.ceil((reset - Date.now()) / 1000));
      res.setHeader('Retry-After', String(retryAfter));
      next(new RateLimitedError(retryAfter));
    },
  });
}
