import { Queue, type DefaultJobOptions } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import type { MaintenanceJobData, SettlementJobData, WebhookJobData } from './job-payloads';
import { QueueName } from './queue-names';

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

/** The job options of each queue of ours, whichever datastore holds it. */
export const queueDefaults: Record<'settlement' | 'webhook' | 'maintenance', DefaultJobOptions> = {
  // the worker decides when a settlement job gives up (SETTLEMENT_MAX_ATTEMPTS transient failures, or one
  // permanent): it then ends the settlement or parks it for an operator. This is only a ceiling.
  settlement: { ...RETENTION, attempts: 1000, backoff: { type: 'settlement' } },
  // the spec: 6 attempts, on the schedule the worker's backoff gives
  webhook: { ...RETENTION, attempts: WEBHOOK_ATTEMPTS, backoff: { type: 'webhook' } },
  // one scheduled job at a time; a failed run is simply the next one's work
  maintenance: { removeOnComplete: { count: 100 }, removeOnFail: { count: 100 }, attempts: 1 },
};

/** The queues on one Redis connection (see QueueStore for either datastore). */
export function createQueues(connection: Redis | Cluster, prefix: string, onError: (err: Error) => void = () => {}): Queues {
  return queuesOn((name, defaultJobOptions) => new Queue(name, { connection, prefix, defaultJobOptions }), onError);
}

/** The three queues of ours with their job options, each made by `make` on one datastore. */
export function queuesOn(make: (name: string, defaultJobOptions: DefaultJobOptions) => Queue, onError: (err: Error) => void = () => {}): Queues {
  // the typed views are the same objects: the job data types are ours to keep, not the datastore's
  const settlement = make(QueueName.Settlement, queueDefaults.settlement) as Queue<SettlementJobData>;
  const webhook = make(QueueName.Webhook, queueDefaults.webhook) as Queue<WebhookJobData>;
  const maintenance = make(QueueName.Maintenance, queueDefaults.maintenance) as Queue<MaintenanceJobData>;
  for (const queue of [settlement, webhook, maintenance]) queue.on('error', onError);
  return {
    settlement,
    webhook,
    maintenance,
    async close() {
      await Promise.all([settlement.close(), webhook.close(), maintenance.close()]);
    },
  };
}
