import type { RequestHandler } from 'express';
import { InvalidRequestError } from '@facilitator/core';
import { assertStorableJson, FORM_A_FIELDS } from '@facilitator/schemas';

export function isJsonObject(body: unknown): body is Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

/** The parsed body as an object of reasonable depth, or a 400 saying what was wrong with it. */
export function requireJsonObject(body: unknown): Record<string, unknown> {
  if (!isJsonObject(body)) throw new InvalidRequestError('request body must be a JSON object sent with Content-Type: application/json');
  assertStorableJson(body);
  return body;
}

export type RequestForm = 'form-a' | 'form-b';

const named = (fields: readonly string[]) => fields.map((f) => `\`${f}\``).join(', ');

/**
 * Form A carries `payment`/`requirements`, Form B its own flat fields (`formBFields`); a body with neither
 * (`{}`, a typo'd field) is told what each form needs rather than judged as one of them.
 */
export function formOf(body: Record<string, unknown>, formBFields: readonly string[]): RequestForm {
  const has = (field: string) => Object.hasOwn(body, field);
  if (FORM_A_FIELDS.some(has)) return 'form-a';
  if (formBFields.some(has)) return 'form-b';
  throw new InvalidRequestError(`the body fits neither form: Form A sends ${named(FORM_A_FIELDS)}; Form B sends ${named(formBFields)}`, {
    form_a_fields: [...FORM_A_FIELDS],
    form_b_fields: [...formBFields],
  });
}

/** For routes whose body must be a storable JSON object: checked once, before anything reads it. */
export function jsonObjectBody(): RequestHandler {
  return (req, _res, next) => {
    requireJsonObject(req.body);
    next();
  };
}
