import type { Queue } from 'bullmq';

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized'] as const;

interface QueueSnapshot {
  name: string;
  counts: Record<(typeof QUEUE_STATES)[number], number>;
  /** seconds since the oldest waiting job (prioritized ones included: new settlements are) was added; null when none waits */
  oldestWaitingAgeSeconds: number | null;
}

/** The numbers a dashboard reads: jobs per state, and how long the oldest waiting job has waited. */
export async function snapshotQueue(queue: Queue): Promise<QueueSnapshot> {
  const [counts, oldestWaiting, oldestPrioritized] = await Promise.all([
    queue.getJobCounts(...QUEUE_STATES),
    queue.getJobs(['waiting'], 0, 0, true),
    queue.getJobs(['prioritized'], 0, 0, true),
  ]);
  const job = [...oldestWaiting, ...oldestPrioritized].filter(Boolean).sort((a, b) => a.timestamp - b.timestamp)[0];
  return {
    name: queue.name,
    counts: Object.fromEntries(QUEUE_STATES.map((s) => [s, counts[s] ?? 0])) as QueueSnapshot['counts'],
    oldestWaitingAgeSeconds: job ? Math.max(0, (Date.now() - job.timestamp) / 1000) : null,
  };
}

