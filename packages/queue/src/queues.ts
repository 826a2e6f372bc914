import { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { QueueName } from './queue-names';
import type { SettlementJobData, WebhookJobData } from './job-payloads';

export const WEBHOOK_ATTEMPTS = 6;

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

/** `onError` hears connection trouble (BullMQ would otherwise print it to the console). */
export function createQueues(connection: Redis | Cluster, prefix: string, onError: (err: Error) => void = () => {}): Queues {
  const settlement = new Queue<SettlementJobData>(QueueName.Settlement, {
    connection,
    prefix,
    // a settlement job retries for as long as a step keeps throwing (RPC or database down): each step is
    // idempotent, and giving up would strand money mid-way. The worker's backoff paces the retries.
    defaultJobOptions: { ...RETENTION, attempts: Number.MAX_SAFE_INTEGER, backoff: { type: 'settlement' } },
  });
  const webhook = new Queue<WebhookJobData>(QueueName.Webhook, {
    connection,
    prefix,
    // the spec: 6 attempts, on the schedule the worker's backoff gives
    defaultJobOptions: { ...RETENTION, attempts: WEBHOOK_ATTEMPTS, backoff: { type: 'webhook' } },
  });
  settlement.on('error', onError);
  webhook.on('error', onError);
  return {
    settlement,
    webhook,
    async close() {
      await Promise.all([settlement.close(), webhook.close()]);
    },
  };
}
