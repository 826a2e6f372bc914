import { Router } from 'express';
import { VerificationFailedError } from '@facilitator/core';
import type { IdempotencyRepository } from '@facilitator/db';
import { validateVerifyFormA, validateVerifyFormB } from '@facilitator/schemas';
import { EnabledNetworks, paymentFromFormA, paymentFromFormB, VerificationService } from '@facilitator/verification';
import { idempotency } from '../middleware/idempotency';
import { formAVerificationResult, formBVerificationResult } from '../presenters/verification';
import { isFormA, jsonObjectBody } from '../request-body';
import { apiRouter } from '../api-router';

export interface VerifyRouteDeps {
  networks: EnabledNetworks;
  verification: VerificationService;
  idempotencyKeys: IdempotencyRepository;
  idempotencyTtlSeconds: number;
  /** Refuses an unacceptable webhook_url with a 400 (rules live with the webhooks). */
  checkWebhookUrl(url: string): Promise<void>;
}

export function verifyRoutes(deps: VerifyRouteDeps): Router {
  const router = apiRouter();
  router.post('/v1/verify', jsonObjectBody(), idempotency('verify', deps.idempotencyKeys, deps.idempotencyTtlSeconds), async (req, res) => {
    const body = req.body as Record<string, unknown>;
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
