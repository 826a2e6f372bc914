import type { SettlementRepository, WebhookEventRepository } from '@facilitator/db';
import type { Logger } from '@facilitator/logging';
import type { QueueName, Queues } from '@facilitator/queue';
import type { WebhookOutbox } from '@facilitator/webhooks';

export interface SweeperOptions {
  settlements: SettlementRepository;
  queues: Queues;
  webhookEvents: WebhookEventRepository;
  outbox: WebhookOutbox;
  logger: Logger;
  serves: readonly QueueName[];
  intervalMs?: number;
  /** a record untouched this long while not final is checked for a lost job */
  staleAfterMs?: number;
}

/**
 * Postgres is the source of truth; Redis may lose a job (a restart without persistence, an enqueue that
 * failed after the row was written). Periodically, records that should have a job but look idle get
 * one again. Job ids are record ids, so this never duplicates work.
 */
export class Sweeper {
  private timer?: NodeJS.Timeout;

  constructor(private readonly options: SweeperOptions) {}

  start(): void {
    const interval = this.options.intervalMs ?? 30_000;
    this.timer = setInterval(() => void this.sweep().catch((err) => this.options.logger.warn('sweep failed', { err: err.message })), interval);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<void> {
    const olderThan = new Date(Date.now() - (this.options.staleAfterMs ?? 60_000));
    if (this.options.serves.includes('settlement')) await this.sweepSettlements(olderThan);
    if (this.options.serves.includes('webhook')) await this.sweepWebhooks(olderThan);
  }

  private async sweepSettlements(olderThan: Date): Promise<void> {
    const { queues, settlements, logger } = this.options;
    for (const settlement of await settlements.findStale(olderThan, 100)) {
      const job = await queues.settlement.getJob(settlement.id);
      const state = job ? await job.getState() : 'missing';
      if (state === 'missing' || state === 'unknown') {
        await queues.settlement.add('settle', { settlementId: settlement.id }, { jobId: settlement.id });
      } else if (state === 'failed' || state === 'completed') {
        await job!.remove();
        await queues.settlement.add('settle', { settlementId: settlement.id }, { jobId: settlement.id });
      } else continue;
      logger.warn('re-enqueued an idle settlement', { settlementId: settlement.id, state: settlement.state, job: state });
    }
  }

  private async sweepWebhooks(olderThan: Date): Promise<void> {
    const { webhookEvents, queues, outbox } = this.options;
    const pending = await webhookEvents.findStalePending(olderThan, 100);
    for (const event of pending) {
      const job = await queues.webhook.getJob(event.id);
      if (!job) await outbox.enqueue(event.id);
    }
  }
}
