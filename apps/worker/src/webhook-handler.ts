import { DelayedError, UnrecoverableError } from 'bullmq';
import type { Logger } from '@facilitator/logging';
import type { Metrics } from '@facilitator/metrics';
import { WEBHOOK_ATTEMPTS, type WebhookJobData } from '@facilitator/queue';
import type { WebhookDelivery } from '@facilitator/webhooks';
import type { JobHandler } from './job-catalog';

/** The spec's schedule between attempts (attempt 2 after delays[0], …), overridable for tests. */
export function webhookBackoff(delaysMs: readonly number[]) {
  return (attemptsMade: number) => delaysMs[Math.min(attemptsMade, delaysMs.length) - 1] ?? delaysMs[delaysMs.length - 1];
}

/** The longest a held delivery waits before it asks again (it backs off while its receiver stays busy). */
const MAX_HOLD_WAIT_MS = 30_000;

/**
 * How long a held delivery waits. Behind an open breaker: what the gate said (the cool-down, or until the
 * delivery is overdue). Behind a busy receiver or resolver: 250 ms doubling with each hold of the job, spread
 * ±50% (`random`), so a burst to one receiver flows on quickly while thousands of events queued for one slow
 * receiver do not all come back every second. At most 30 s.
 */
export function holdDelayMs(result: { reason: string; retryAfterMs: number }, holds: number, random: () => number = Math.random): number {
  if (result.reason === 'circuit_open') return Math.min(MAX_HOLD_WAIT_MS, result.retryAfterMs);
  const backoff = 250 * 2 ** Math.min(Math.max(holds, 0), 7);
  return Math.min(MAX_HOLD_WAIT_MS, Math.max(result.retryAfterMs, Math.round(backoff * (0.5 + random()))));
}

/**
 * Runs one delivery attempt per job. A retry is a thrown error (BullMQ schedules the next attempt by
 * `webhookBackoff`); a delivery that failed for good is an UnrecoverableError (no further attempt). A
 * delivery held by its receiver's cap or breaker moves its job back to delayed (DelayedError): its slot is
 * free at once and none of the spec's 6 attempts is used.
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
    async process(job, token) {
      const { eventId } = job.data;
      const result = await delivery.attempt(eventId, job.attemptsMade + 1 >= (job.opts.attempts ?? WEBHOOK_ATTEMPTS));
      metrics.webhookAttempts.inc({ outcome: result.outcome });
      if (result.outcome === 'held') {
        // every start of the job that did not end in a failed attempt was a hold (BullMQ counts starts and failures apart)
        const holds = (job.attemptsStarted ?? 0) - job.attemptsMade - 1;
        await job.moveToDelayed(Date.now() + holdDelayMs(result, holds), token);
        throw new DelayedError();
      }
      if (result.outcome === 'delivered') return { delivered: true };
      logger.info('webhook attempt failed', { eventId, attempt: job.attemptsMade + 1, error: result.error });
      if (result.outcome === 'failed') throw new UnrecoverableError(`delivery failed after ${job.attemptsMade + 1} attempts: ${result.error}`);
      throw new Error(result.error);
    },
  };
}
