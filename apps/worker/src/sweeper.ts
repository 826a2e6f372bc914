import type { SettlementRetention, WebhookEventRepository } from '@facilitator/db';
import type { Logger } from '@facilitator/logging';
import { enqueueSettlement, type Queues } from '@facilitator/queue';
import type { WebhookOutbox } from '@facilitator/webhooks';

export interface SweeperOptions {
  settlements: SettlementRetention;
  queues: Queues;
  webhookEvents: WebhookEventRepository;
  outbox: WebhookOutbox;
  logger: Logger;
  /** a record untouched this long while not final is checked for a lost job */
  staleAfterMs?: number;
}

/**
 * Postgres is the source of truth; the queue may lose a job (a Redis restart without persistence, an
 * enqueue that failed after the row was written). Records that should have a job but look idle get one
 * again. Job ids are record ids, so this never duplicates work. It runs as the `sweep` maintenance job
 * (a BullMQ job scheduler, SWEEP_INTERVAL_MS): once across the cluster, not once per worker process.
 */
export class Sweeper {
  constructor(private readonly options: SweeperOptions) {}

  async sweep(): Promise<{ settlements: number; webhookEvents: number }> {
    const olderThan = new Date(Date.now() - (this.options.staleAfterMs ?? 60_000));
    return { settlements: await this.sweepSettlements(olderThan), webhookEvents: await this.sweepWebhooks(olderThan) };
  }

  private async sweepSettlements(olderThan: Date): Promise<number> {
    const { queues, settlements, logger } = this.options;
    let enqueued = 0;
    for (const settlement of await settlements.findStale(olderThan, 100)) {
      const job = await queues.settlement.getJob(settlement.id);
      const state = job ? await job.getState() : 'missing';
      if (state === 'missing' || state === 'unknown') {
        await enqueueSettlement(queues, settlement.id);
      } else if (state === 'failed' || state === 'completed') {
        await job!.remove();
        await enqueueSettlement(queues, settlement.id);
      } else continue;
      enqueued++;
      logger.warn('re-enqueued an idle settlement', { settlementId: settlement.id, state: settlement.state, job: state });
    }
    return enqueued;
  }

  private async sweepWebhooks(olderThan: Date): Promise<number> {
    const { webhookEvents, queues, outbox } = this.options;
    let enqueued = 0;
    for (const event of await webhookEvents.findStalePending(olderThan, 100)) {
      if (await queues.webhook.getJob(event.id)) continue;
      await outbox.enqueue(event.id);
      enqueued++;
    }
    return enqueued;
  }
}
