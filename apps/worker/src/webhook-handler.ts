import { UnrecoverableError } from 'bullmq';
import type { Logger } from '@facilitator/logging';
import type { Metrics } from '@facilitator/metrics';
import { WEBHOOK_ATTEMPTS, type WebhookJobData } from '@facilitator/queue';
import type { WebhookDelivery } from '@facilitator/webhooks';
import type { JobHandler } from './job-catalog';

/** The spec's schedule between attempts (attempt 2 after delays[0], …), overridable for tests. */
export function webhookBackoff(delaysMs: readonly number[]) {
  return (attemptsMade: number) => delaysMs[Math.min(attemptsMade, delaysMs.length) - 1] ?? delaysMs[delaysMs.length - 1];
}

/**
 * Runs one delivery attempt per job. A retry is a thrown error (BullMQ schedules the next attempt by
 * `webhookBackoff`); a delivery that failed for good is an UnrecoverableError (no further attempt).
 * Takes only what it uses of the delivery and the metrics, so tests pass in-memory ones.
 */
export function webhookHandler(
  delivery: Pick<WebhookDelivery, 'attempt'>,
  logger: Logger,
  concurrency: number,
  delaysMs: readonly number[],
  metrics: Pick<Metrics, 'webhookAttempts'>,
): JobHandler<WebhookJobData> {
  return {
    concurrency,
    backoff: webhookBackoff(delaysMs),
    async process(job) {
      const { eventId } = job.data;
      const result = await delivery.attempt(eventId, job.attemptsMade + 1 >= (job.opts.attempts ?? WEBHOOK_ATTEMPTS));
      metrics.webhookAttempts.inc({ outcome: result.outcome });
      if (result.outcome === 'delivered') return { delivered: true };
      logger.info('webhook attempt failed', { eventId, attempt: job.attemptsMade + 1, error: result.error });
      if (result.outcome === 'failed') throw new UnrecoverableError(`delivery failed after ${job.attemptsMade + 1} attempts: ${result.error}`);
      throw new Error(result.error);
    },
  };
}
