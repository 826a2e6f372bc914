import { once } from 'node:events';
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import type { Cluster, Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { RateLimitedError } from '@facilitator/core';
import { x402SettleFailed, x402VerifyInvalid } from '../presenters/x402';

/** The x402 routes answer every refusal in x402's own shapes, which the x402 middleware reads. */
const X402_ANSWERS: Record<string, (message: string) => object> = {
  '/x402/verify': (message) => x402VerifyInvalid('rate_limited', message),
  '/x402/settle': (message) => x402SettleFailed('rate_limited', message, undefined, undefined),
};

/** Counted in Redis, shared by every API process and instance; the store loads its scripts at once. */
function redisStore(redis: Redis | Cluster, prefix: string): Store {
  const sendCommand = async (...args: string[]): Promise<RedisReply> => {
    // wait for the connection rather than fail at start-up
    if (redis.status !== 'ready') await once(redis, 'ready');
    return (await redis.call(args[0], ...args.slice(1))) as RedisReply;
  };
  return new RedisStore({ sendCommand, prefix });
}

/**
 * Per-client request limit, counted in Redis so it holds across every API process and instance (without
 * Redis, QUEUE_BACKEND=postgres: in this process's memory, so each process allows `max`). If Redis cannot be
 * asked, requests pass: a limiter must not become an outage. Over the limit: 429 with Retry-After, in the
 * spec's error envelope on /v1 and in x402's shape on /x402, before the body is read or anything stored.
 * `name` keeps each group's buckets apart (a client's paid-path calls do not use up its merchant requests).
 */
export function rateLimitPerClient(redis: Redis | Cluster | undefined, prefix: string, name: string, limit: { max: number; windowMs: number }): RequestHandler {
  const storePrefix = name === 'paid' ? `${prefix}:ratelimit:` : `${prefix}:ratelimit:${name}:`;
  return rateLimit({
    windowMs: limit.windowMs,
    limit: limit.max,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    passOnStoreError: true,
    ...(redis ? { store: redisStore(redis, storePrefix) } : {}),
    handler: (req: Request, res: Response, next) => {
      const info = (req as typeof req & { rateLimit?: { resetTime?: Date } }).rateLimit;
      const reset = info?.resetTime?.getTime() ?? Date.now() + limit.windowMs;
      const retryAfter = Math.max(1, Math.ceil((reset - Date.now()) / 1000));
      res.setHeader('Retry-After', String(retryAfter));
      const error = new RateLimitedError(retryAfter);
      const x402 = X402_ANSWERS[req.originalUrl.split('?')[0]];
      if (x402) res.status(429).json(x402(error.message));
      else next(error);
    },
  });
}
