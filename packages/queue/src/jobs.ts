import type { MaintenanceJobData, SettlementJobData, WebhookJobData } from './job-payloads';
import type { Queues } from './queues';

/** The jobs of each queue, by name. With the enqueue functions below, the only way jobs are added. */
export const JobName = {
  Settle: 'settle',
  Deliver: 'deliver',
  /** deletes rejected verifications and expired idempotency keys past their retention */
  Retention: 'retention',
  /** gives a job again to records whose job was lost (Postgres is the source of truth, not the queue) */
  Sweep: 'sweep',
  /** watches settled transactions for reorgs until they are final */
  Finality: 'finality',
} as const;

type MaintenanceJobName = typeof JobName.Retention | typeof JobName.Sweep | typeof JobName.Finality;

/** The payload type of each queue's jobs, for typed handlers. */
export interface JobDataOf {
  settlement: SettlementJobData;
  webhook: WebhookJobData;
  maintenance: MaintenanceJobData;
}

// Job ids are record ids: enqueueing the same record twice (the API, the sweeper, an operator) yields one
// job, since BullMQ returns the existing job for an id it holds.

/**
 * Settlement jobs' places in the queue. BullMQ (Redis and Postgres alike) takes a job without a priority before
 * any prioritized one, so new work is prioritized (behind) and a settlement whose transaction's outcome is
 * known drops its priority to 0 while it waits (the worker's handler): recording what is already on chain never
 * waits behind new settlements, however many strangers offer (issue 41, item 4).
 */
export const SettlementJobPriority = {
  /** a settlement taken in (the API, the sweeper) */
  New: 1,
  /** a settlement whose job gave its slot up while its transaction is on its way, and operators' retries */
  Resumed: 0,
} as const;

/** The job that advances a settlement through its states. */
export async function enqueueSettlement(
  queues: Pick<Queues, 'settlement'>,
  settlementId: string,
  priority: number = SettlementJobPriority.New,
): Promise<void> {
  await queues.settlement.add(JobName.Settle, { settlementId }, { jobId: settlementId, ...(priority > 0 ? { priority } : {}) });
}

/** The job that delivers a webhook event, on the spec's retry schedule. */
export async function enqueueWebhookDelivery(queues: Pick<Queues, 'webhook'>, eventId: string): Promise<void> {
  await queues.webhook.add(JobName.Deliver, { eventId }, { jobId: eventId });
}

/**
 * A housekeeping job's schedule, upserted by every worker at start: BullMQ keeps one scheduler per id, so
 * however many workers run, each run happens once across the cluster.
 */
export async function scheduleMaintenance(queues: Pick<Queues, 'maintenance'>, job: MaintenanceJobName, everyMs: number): Promise<void> {
  await queues.maintenance.upsertJobScheduler(job, { every: everyMs }, { name: job, data: {} });
}

