import { Router } from 'express';
import { InvalidRequestError, VerificationFailedError } from '@facilitator/core';
import type { IdempotencyRepository } from '@facilitator/db';
import { assertShallowJson, validateVerifyFormA, validateVerifyFormB } from '@facilitator/schemas';
import { EnabledNetworks, paymentFromFormA, paymentFromFormB, VerificationService } from '@facilitator/verification';
import { idempotency } from '../middleware/idempotency';
import { formAVerificationResult, formBVerificationResult } from '../presenters/verification';

export interface VerifyRouteDeps {
  networks: EnabledNetworks;
  verification: VerificationService;
  idempotencyKeys: IdempotencyRepository;
  idempotencyTtlSeconds: number;
  /** Refuses an unacceptable webhook_url with a 400 (rules live with the webhooks). */
  checkWebhookUrl(url: string): Promise<void>;
}

export function isJsonObject(body: unknown): body is Record<string, unknown> {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}

export function requireJsonObject(body: unknown): Record<string, unknown> {
  if (!isJsonObject(body)) throw new InvalidRequestError('request body must be a JSON object sent with Content-Type: application/json');
  assertShallowJson(body);
  return body;
}

/** Form A carries `payment`/`requirements`; anything else is read as the flat Form B. */
export function isFormA(body: Record<string, unknown>): boolean {
  return 'payment' in body || 'requirements' in body;
}

export function verifyRoutes(deps: VerifyRouteDeps): Router {
  const router = Router();
  router.post('/v1/verify', idempotency('verify', deps.idempotencyKeys, deps.idempotencyTtlSeconds), async (req, res) => {
    const body = requireJsonObject(req.body);
    const formA = isFormA(body);
    const payment = formA
      ? paymentFromFormA(validateVerifyFormA(body), deps.networks, 'v1')
      : paymentFromFormB(validateVerifyFormB(body), deps.networks);
    if (payment.webhookUrl !== undefined) await deps.checkWebhookUrl(payment.webhookUrl);
    const { record, failure } = await deps.verification.verify(payment);
    if (failure) throw new VerificationFailedError(failure.message, { ...failure.details, verification_id: record.id });
    res.json(formA ? formAVerificationResult(record) : formBVerificationResult(record));
  });
  return router;
}
