import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import {
  canonicalJson,
  IdempotencyKeyInFlightError,
  IdempotencyKeyReusedError,
  InvalidRequestError,
} from '@facilitator/core';
import type { IdempotencyRepository } from '@facilitator/db';

const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

/**
 * Keys are scoped per client, so one client cannot take (or replay) another's: by API key when one is
 * sent (its SHA-256, never the key), else by the client address (as Express resolves it behind proxies).
 */
function clientScope(req: Request): string {
  const apiKey = req.get('x-api-key');
  if (apiKey) return `key:${createHash('sha256').update(apiKey).digest('hex')}`;
  return `ip:${req.ip ?? 'unknown'}`;
}

/**
 * Idempotency-Key support: the same key and body replays the stored answer; the same key with another
 * body is 422; a request still running with that key is 409. Answers of 5xx are not stored, so the
 * client's retry does the work again.
 */
export function idempotency(scope: string, store: IdempotencyRepository, ttlSeconds: number): RequestHandler {
  return async (req, res, next) => {
    const key = req.get('idempotency-key');
    if (key === undefined) return next();
    if (!KEY_FORMAT.test(key)) {
      throw new InvalidRequestError('Idempotency-Key must be 1-255 visible ASCII characters');
    }
    const requestHash = createHash('sha256').update(canonicalJson(req.body ?? null)).digest('hex');
    const scoped = `${scope}:${clientScope(req)}`;
    const claim = await store.claim(scoped, key, requestHash, ttlSeconds);
    switch (claim.kind) {
      case 'mismatch':
        throw new IdempotencyKeyReusedError();
      case 'in_flight':
        throw new IdempotencyKeyInFlightError();
      case 'completed':
        res.setHeader('Idempotent-Replayed', 'true');
        res.status(claim.status).json(claim.body);
        return;
      case 'claimed':
        rememberAnswer(res, (status, body) =>
          status >= 500 ? store.release(scoped, key) : store.complete(scoped, key, status, body),
        );
        next();
    }
  };
}

/** Captures the JSON body the route answers with, and hands it over once the answer is decided. */
function rememberAnswer(res: Response, save: (status: number, body: unknown) => Promise<void>): void {
  const json = res.json.bind(res);
  let saved: Promise<void> | undefined;
  res.json = (body: unknown) => {
    // the answer is stored before it is sent, so a replay can never miss what the client saw
    saved ??= save(res.statusCode, body).catch(() => undefined);
    void saved.then(() => json(body));
    return res;
  };
  res.on('close', () => {
    // the request ended with no JSON answer (e.g. the client went away): free the key
    if (!saved) void save(500, null).catch(() => undefined);
  });
}
