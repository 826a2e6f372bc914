import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { QueueName } from './queue-names';
import type { SettlementJobData, WebhookJobData } from './job-payloads';

export interface Queues {
  settlement: Queue<SettlementJobData>;
  webhook: Queue<WebhookJobData>;
  close(): Promise<void>;
}

// Finished jobs are kept briefly for dashboards; Postgres keeps the history for good.
const RETENTION = {
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 50_000 },
};

export function createQueues(connection: Redis, prefix: string): Queues {
  const settlement = new Queue<SettlementJobData>(QueueName.Settlement, {
    connection,
    prefix,
    defaultJobOptions: { ...RETENTION, attempts: 1000, backoff: { type: 'exponential', delay: 1000 } },
  });
  const webhook = new Queue<WebhookJobData>(QueueName.Webhook, { connection, prefix, defaultJobOptions: RETENTION });
  return {
    settlement,
    webhook,
    async close() {
      await Promise.all([settlement.close(), webhook.close()]);
    },
  };
}
