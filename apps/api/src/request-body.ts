import type { RequestHandler } from 'express';
import { InvalidRequestError } from '@facilitator/core';
import { assertStorableJson } from '@facilitator/schemas';

export function isJsonObject(body: unknown): body is Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

/** The parsed body as an object of reasonable depth, or a 400 saying what was wrong with it. */
export function requireJsonObject(body: unknown): Record<string, unknown> {
  if (!isJsonObject(body)) throw new InvalidRequestError('request body must be a JSON object sent with Content-Type: application/json');
  assertStorableJson(body);
  return body;
}

/** Form A carries `payment`/`requirements`; anything else is read as the flat Form B. */
export function isFormA(body: Record<string, unknown>): boolean {
  return 'payment' in body || 'requirements' in body;
}

/** For routes whose body must be a storable JSON object: checked once, before anything reads it. */
export function jsonObjectBody(): RequestHandler {
  return (req, _res, next) => {
    requireJsonObject(req.body);
    next();
  };
}
