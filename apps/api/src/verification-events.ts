import type { Logger } from '@facilitator/logging';
import { FailureReason, type VerificationOutcome } from '@facilitator/verification';
import { WebhookEventType, type WebhookOutbox } from '@facilitator/webhooks';

/**
 * Whether a verification's outcome is about a payment its payer really signed. Checks run in the spec's
 * order with the signature first, so every failure but `invalid_signature` comes from a valid signature
 * (an amount, recipient, time, token or nonce that does not fit).
 */
export function hasValidSignature(outcome: Pick<VerificationOutcome, 'failure'>): boolean {
  return outcome.failure?.reason !== FailureReason.InvalidSignature;
}

export interface VerificationEventsDeps {
  outbox: WebhookOutbox;
  logger: Logger;
  /** resolves the webhook host (capped, non-blocking) and throws WebhookUrlRejected for a non-public or missing host */
  checkWebhookHost(url: URL): Promise<void>;
}

/**
 * Emits verification.completed / verification.failed for verifications that carry a webhook_url, only
 * when the payment's signature is valid: a stranger's garbage cannot make us look up its host or POST to
 * it. The host is resolved here, after the signature check and before anything is stored for delivery;
 * a WebhookUrlRejected propagates (the route answers 400, no event is made).
 */
export function verificationEvents(deps: VerificationEventsDeps): (outcome: VerificationOutcome) => Promise<void> {
  return async ({ record, failure }) => {
    // no payTo, no merchant to sign for (a request that never got that far has no webhook_url either)
    if (!record.webhookUrl || !record.merchant) return;
    if (!hasValidSignature({ failure })) return;
    await deps.checkWebhookHost(new URL(record.webhookUrl));
    try {
      await deps.outbox.publish({
        type: failure ? WebhookEventType.VerificationFailed : WebhookEventType.VerificationCompleted,
        url: record.webhookUrl,
        verificationId: record.id,
        merchant: record.merchant,
        status: record.status,
        data: failure
          ? { reason: failure.message, details: failure.details }
          : {
              payer_address: record.payer,
              merchant_address: record.merchant,
              verified_amount: record.amount,
              verified_token: record.tokenAddress,
              chain: record.networkName,
              nonce: record.nonce,
            },
      });
    } catch (err) {
      // the verification stands; a pending event row, if written, is retried by the webhook sweeper
      deps.logger.error('could not publish verification event', { verificationId: record.id, err });
    }
  };
}
