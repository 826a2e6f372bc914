import type { Job } from 'bullmq';
import { ALL_QUEUES, type JobDataOf, type QueueName } from '@facilitator/queue';

/** Runs the jobs of one queue, whose payload type the catalog fixes (no casts of `job.data`). */
export interface JobHandler<Data> {
  /** `token`: the job's lock token, for moving the job itself (a delay) */
  process(job: Job<Data>, token?: string): Promise<unknown>;
  concurrency: number;
  /** retry delay after the given number of failed attempts (BullMQ custom backoff) */
  backoff?: (attemptsMade: number) => number;
}

export type JobCatalog = { [Queue in QueueName]: JobHandler<JobDataOf[Queue]> };

/** Refuses to start a worker that would consume a queue it has no handler for. */
export function assertCatalogComplete(catalog: Partial<JobCatalog>, served: readonly QueueName[]): void {
  const missing = served.filter((queue) => !catalog[queue]);
  if (missing.length > 0) throw new Error(`no job handler for queue(s): ${missing.join(', ')}`);
  const unknown = served.filter((queue) => !ALL_QUEUES.includes(queue));
  if (unknown.length > 0) throw new Error(`unknown queue(s): ${unknown.join(', ')}`);
}
