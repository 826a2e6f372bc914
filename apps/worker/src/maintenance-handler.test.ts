import type { Job } from 'bullmq';
import { createLogger } from '@facilitator/logging';
import { JobName, type MaintenanceJobData } from '@facilitator/queue';
import { Writable } from 'node:stream';
import { maintenanceHandler, runRetention, type RetentionDeps } from './maintenance-handler';

const DAY = 24 * 3600 * 1000;
const NOW = Date.UTC(2026, 10, 23);
const quiet = createLogger({ service: 'worker', stream: new Writable({ write: (_c, _e, done) => done() }) });

/** Retention's stores in memory: what was asked of each, in order, and rows to delete in batches. */
function retentionDeps(rejectedRows: number, expiredKeys: number) {
  const calls: string[] = [];
  let left = rejectedRows;
  const deps: RetentionDeps = {
    webhookEvents: { deleteOfRejectedVerifications: async (before) => (calls.push(`events before ${before.toISOString()}`), 0) },
    verifications: {
      purgeRejected: async (before, batch) => {
        const deleted = Math.min(batch, left);
        left -= deleted;
        calls.push(`verifications before ${before.toISOString()} (${deleted})`);
        return deleted;
      },
    },
    idempotencyKeys: { deleteExpired: async (before = new Date()) => (calls.push(`keys before ${before.toISOString()}`), expiredKeys) },
    retention: { rejectedVerificationsMs: 30 * DAY, expiredIdempotencyKeysMs: DAY, intervalMs: 3_600_000 },
    logger: quiet,
    now: () => NOW,
  };
  return { deps, calls };
}

describe('runRetention', () => {
  it("deletes rejected verifications past their age in batches, their events first, then expired idempotency keys", async () => {
    const { deps, calls } = retentionDeps(2_500, 7);
    expect(await runRetention(deps)).toEqual({ rejectedVerifications: 2_500, idempotencyKeys: 7 });
    const thirtyDaysAgo = new Date(NOW - 30 * DAY).toISOString();
    expect(calls).toEqual([
      `events before ${thirtyDaysAgo}`,
      `verifications before ${thirtyDaysAgo} (1000)`,
      `verifications before ${thirtyDaysAgo} (1000)`,
      `verifications before ${thirtyDaysAgo} (500)`,
      `keys before ${new Date(NOW - DAY).toISOString()}`,
    ]);
  });
});

describe('maintenanceHandler', () => {
  const job = (name: string) => ({ name, data: {} }) as unknown as Job<MaintenanceJobData>;

  it('runs retention, the sweep and reorg watching by job name, and refuses an unknown job', async () => {
    const { deps } = retentionDeps(0, 0);
    let swept = 0;
    const finality = { run: async () => ({ watched: 3, final: 1, reorged: 1, changed: 0 }) };
    const handler = maintenanceHandler({ ...deps, sweeper: { sweep: async () => (swept++, { settlements: 2, webhookEvents: 1 }) }, finality });
    expect(handler.concurrency).toBe(1);
    expect(await handler.process(job(JobName.Retention))).toEqual({ rejectedVerifications: 0, idempotencyKeys: 0 });
    expect(await handler.process(job(JobName.Sweep))).toEqual({ settlements: 2, webhookEvents: 1 });
    expect(swept).toBe(1);
    expect(await handler.process(job(JobName.Finality))).toEqual({ watched: 3, final: 1, reorged: 1, changed: 0 });
    await expect(handler.process(job('vacuum'))).rejects.toThrow('unknown maintenance job vacuum');
  });
});
