import type { Logger } from '@facilitator/logging';
import type { VerificationListener } from '@facilitator/verification';
import { WebhookEventType, type WebhookOutbox } from '@facilitator/webhooks';

/** Emits verification.completed / verification.failed for verifications that carry a webhook_url. */
export function verificationEvents(outbox: WebhookOutbox, logger: Logger): VerificationListener {
  return async ({ record, failure }) => {
    // no payTo, no merchant to sign for (a request that never got that far has no webhook_url either)
    if (!record.webhookUrl || !record.merchant) return;
    try {
      await outbox.publish({
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
              chain: record.network,
              nonce: record.nonce,
            },
      });
    } catch (err) {
      // the verification stands; a pending event row, if written, is retried by the webhook sweeper
      logger.error('could not publish verification event', { verificationId: record.id, err });
    }
  };
}
