import type { RetentionConfig } from '@facilitator/config';
import type { IdempotencyRepository, VerificationRepository, WebhookEventRepository } from '@facilitator/db';
import type { Logger } from '@facilitator/logging';
import type { FinalityWatcher } from '@facilitator/settlement';
import { JobName, type MaintenanceJobData } from '@facilitator/queue';
import type { JobHandler } from './job-catalog';
import type { Sweeper } from './sweeper';

/** Rows deleted per statement, so one run never holds a long lock or a huge transaction. */
const BATCH = 1_000;

export interface RetentionDeps {
  verifications: Pick<VerificationRepository, 'purgeRejected'>;
  idempotencyKeys: Pick<IdempotencyRepository, 'deleteExpired'>;
  webhookEvents: Pick<WebhookEventRepository, 'deleteOfRejectedVerifications'>;
  retention: RetentionConfig;
  logger: Logger;
  now?: () => number;
}

/**
 * Deletes what is only kept for a while: rejected verifications past their retention (with their webhook
 * events) and idempotency keys a while after they expired. Settlements and successful verifications are
 * kept for good.
 */
export async function runRetention(deps: RetentionDeps): Promise<{ rejectedVerifications: number; idempotencyKeys: number }> {
  const now = deps.now?.() ?? Date.now();
  const before = new Date(now - deps.retention.rejectedVerificationsMs);
  // their events first (each table has one owner; an event refers to its verification)
  await deps.webhookEvents.deleteOfRejectedVerifications(before);
  let rejectedVerifications = 0;
  for (;;) {
    const deleted = await deps.verifications.purgeRejected(before, BATCH);
    rejectedVerifications += deleted;
    if (deleted < BATCH) break;
  }
  const idempotencyKeys = await deps.idempotencyKeys.deleteExpired(new Date(now - deps.retention.expiredIdempotencyKeysMs));
  if (rejectedVerifications + idempotencyKeys > 0) deps.logger.info('retention run', { rejectedVerifications, idempotencyKeys });
  return { rejectedVerifications, idempotencyKeys };
}

/** The scheduled housekeeping jobs (each run once across the cluster by its BullMQ job scheduler). */
export function maintenanceHandler(deps: RetentionDeps & { sweeper: Pick<Sweeper, 'sweep'>; finality: Pick<FinalityWatcher, 'run'> }): JobHandler<MaintenanceJobData> {
  return {
    concurrency: 1,
    async process(job) {
      if (job.name === JobName.Retention) return runRetention(deps);
      if (job.name === JobName.Sweep) return deps.sweeper.sweep();
      if (job.name === JobName.Finality) return deps.finality.run();
      throw new Error(`unknown maintenance job ${job.name}`);
    },
  };
}
