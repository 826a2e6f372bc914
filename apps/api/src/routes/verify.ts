import { Router } from 'express';
import { VerificationFailedError } from '@facilitator/core';
import type { IdempotencyRepository } from '@facilitator/db';
import { validateVerifyFormA, validateVerifyFormB, VERIFY_FORM_B_FIELDS } from '@facilitator/schemas';
import { EnabledNetworks, paymentFromFormA, paymentFromFormB, VerificationService, type VerificationOutcome } from '@facilitator/verification';
import { idempotency } from '../middleware/idempotency';
import { formAVerificationResult, formBVerificationResult } from '../presenters/verification';
import { formOf, jsonObjectBody } from '../request-body';
import { apiRouter } from '../api-router';

export interface VerifyRouteDeps {
  networks: EnabledNetworks;
  verification: VerificationService;
  idempotencyKeys: IdempotencyRepository;
  idempotencyTtlSeconds: number;
  /** Refuses an unacceptable webhook_url with a 400 (rules live with the webhooks); no lookup: it runs before any check of the payment. */
  checkWebhookUrl(url: string): void;
  /** After the checks: the verification's webhook events (its host resolved only for a validly signed payment; a 400 when refused). */
  afterVerify?(outcome: VerificationOutcome): Promise<void>;
}

export function verifyRoutes(deps: VerifyRouteDeps): Router {
  const router = apiRouter();
  router.post('/v1/verify', jsonObjectBody(), idempotency('verify', deps.idempotencyKeys, deps.idempotencyTtlSeconds), async (req, res) => {
    const body = req.body as Record<string, unknown>;
    const formA = formOf(body, VERIFY_FORM_B_FIELDS) === 'form-a';
    const payment = formA
      ? paymentFromFormA(validateVerifyFormA(body), deps.networks, 'v1')
      : paymentFromFormB(validateVerifyFormB(body), deps.networks);
    if (payment.webhookUrl !== undefined) deps.checkWebhookUrl(payment.webhookUrl);
    const outcome = await deps.verification.verify(payment);
    await deps.afterVerify?.(outcome);
    const { record, failure } = outcome;
    if (failure) throw new VerificationFailedError(failure.message, { ...failure.details, verification_id: record.id });
    res.json(formA ? formAVerificationResult(record) : formBVerificationResult(record));
  });
  return router;
}
