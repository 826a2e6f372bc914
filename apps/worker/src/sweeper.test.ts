import type { SettlementRetention, WebhookEventRepository } from '@facilitator/db';
import { createLogger } from '@facilitator/logging';
import type { Queues } from '@facilitator/queue';
import type { WebhookOutbox } from '@facilitator/webhooks';
import { Writable } from 'node:stream';
import { Sweeper } from './sweeper';

type JobState = 'waiting' | 'active' | 'delayed' | 'failed' | 'completed' | 'unknown';

/** A queue that holds jobs by id, the way BullMQ does (adding an id it holds returns the existing job). */
function fakeQueue(states: Record<string, JobState>) {
  const added: string[] = [];
  const removed: string[] = [];
  return {
    added,
    removed,
    async getJob(id: string) {
      const state = states[id];
      if (!state) return undefined;
      return { getState: async () => state, remove: async () => void (removed.push(id), delete states[id]) };
    },
    async add(_name: string, _data: unknown, opts: { jobId: string }) {
      added.push(opts.jobId);
      states[opts.jobId] = 'waiting';
    },
  };
}

const quiet = createLogger({ service: 'worker', stream: new Writable({ write: (_c, _e, done) => done() }) });

function sweeperWith(settlementJobs: Record<string, JobState>, webhookJobs: Record<string, JobState>, stale: { settlements: string[]; events: string[] }) {
  const settlementQueue = fakeQueue(settlementJobs);
  const webhookQueue = fakeQueue(webhookJobs);
  const outboxed: string[] = [];
  let olderThan: Date | undefined;
  const sweeper = new Sweeper({
    settlements: {
      findStale: async (before: Date) => {
        olderThan = before;
        return stale.settlements.map((id) => ({ id, state: 'collect_fee' }));
      },
    } as unknown as SettlementRetention,
    webhookEvents: { findStalePending: async () => stale.events.map((id) => ({ id })) } as unknown as WebhookEventRepository,
    queues: { settlement: settlementQueue, webhook: webhookQueue } as unknown as Queues,
    outbox: { enqueue: async (id: string) => void outboxed.push(id) } as unknown as WebhookOutbox,
    logger: quiet,
    staleAfterMs: 60_000,
  });
  return { sweeper, settlementQueue, webhookQueue, outboxed, olderThan: () => olderThan };
}

describe('Sweeper', () => {
  it('gives a job again to idle settlements whose job is missing or finished, and leaves live jobs alone', async () => {
    const jobs: Record<string, JobState> = { stl_live: 'active', stl_delayed: 'delayed', stl_failed: 'failed', stl_done: 'completed' };
    const t = sweeperWith(jobs, {}, { settlements: ['stl_missing', 'stl_live', 'stl_delayed', 'stl_failed', 'stl_done'], events: [] });
    const before = Date.now();
    const result = await t.sweeper.sweep();
    const after = Date.now();
    expect(t.settlementQueue.added.sort()).toEqual(['stl_done', 'stl_failed', 'stl_missing']);
    expect(t.settlementQueue.removed.sort()).toEqual(['stl_done', 'stl_failed']);
    expect(result).toEqual({ settlements: 3, webhookEvents: 0 });
    // "idle" means untouched for staleAfterMs, counted from the sweep's own clock reading
    expect(t.olderThan()!.getTime()).toBeGreaterThanOrEqual(before - 60_000);
    expect(t.olderThan()!.getTime()).toBeLessThanOrEqual(after - 60_000);
  });

  it('enqueues a pending webhook event only when it has no job', async () => {
    const t = sweeperWith({}, { evt_queued: 'delayed' }, { settlements: [], events: ['evt_lost', 'evt_queued'] });
    expect(await t.sweeper.sweep()).toEqual({ settlements: 0, webhookEvents: 1 });
    expect(t.outboxed).toEqual(['evt_lost']);
  });

  it('is idempotent: a second sweep right after finds every record with a job', async () => {
    const t = sweeperWith({}, {}, { settlements: ['stl_a', 'stl_b'], events: [] });
    await t.sweeper.sweep();
    expect(await t.sweeper.sweep()).toEqual({ settlements: 0, webhookEvents: 0 });
    expect(t.settlementQueue.added).toEqual(['stl_a', 'stl_b']);
  });
});
