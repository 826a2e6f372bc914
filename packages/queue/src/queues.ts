import { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { QueueName } from './queue-names';
import type { MaintenanceJobData, SettlementJobData, WebhookJobData } from './job-payloads';

export const WEBHOOK_ATTEMPTS = 6;

export interface Queues {
  settlement: Queue<SettlementJobData>;
  webhook: Queue<WebhookJobData>;
  maintenance: Queue<MaintenanceJobData>;
  close(): Promise<void>;
}

// Finished jobs are kept briefly for dashboards; Postgres keeps the history for good.
const RETENTION = {
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 50_000 },
};

/** `onError` hears connection trouble (BullMQ would otherwise print it to the console). */
export function createQueues(connection: Redis | Cluster, prefix: string, onError: (err: Error) => void = () => {}): Queues {
  const settlement = new Queue<SettlementJobData>(QueueName.Settlement, {
    connection,
    prefix,
    // the worker decides when a settlement job gives up (SETTLEMENT_MAX_ATTEMPTS transient failures, or one
    // permanent): it then ends the settlement or parks it for an operator. This is only a ceiling.
    defaultJobOptions: { ...RETENTION, attempts: 1000, backoff: { type: 'settlement' } },
  });
  const webhook = new Queue<WebhookJobData>(QueueName.Webhook, {
    connection,
    prefix,
    // the spec: 6 attempts, on the schedule the worker's backoff gives
    defaultJobOptions: { ...RETENTION, attempts: WEBHOOK_ATTEMPTS, backoff: { type: 'webhook' } },
  });
  // one scheduled job at a time; a failed run is simply the next one's work
  const maintenance = new Queue<MaintenanceJobData>(QueueName.Maintenance, {
    connection,
    prefix,
    defaultJobOptions: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 }, attempts: 1 },
  });
  settlement.on('error', onError);
  webhook.on('error', onError);
  maintenance.on('error', onError);
  return {
    settlement,
    webhook,
    maintenance,
    async close() {
      await Promise.all([settlement.close(), webhook.close(), maintenance.close()]);
    },
  };
}
