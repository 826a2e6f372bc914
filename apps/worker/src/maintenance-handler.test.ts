import type { Job } from 'bullmq';
import type { RetentionCursor, RetentionPage } from '@facilitator/db';
import { createLogger } from '@facilitator/logging';
import { JobName, type MaintenanceJobData } from '@facilitator/queue';
import { Writable } from 'node:stream';
import { maintenanceHandler, runRetention, type RetentionDeps } from './maintenance-handler';

const DAY = 24 * 3600 * 1000;
const HOUR = 3600 * 1000;
const NOW = Date.UTC(2026, 10, 23);
const quiet = createLogger({ service: 'worker', stream: new Writable({ write: (_c, _e, done) => done() }) });
const RETENTION = {
  rejectedVerificationsMs: 30 * DAY,
  expiredIdempotencyKeysMs: DAY,
  intervalMs: 3_600_000,
  expiredVerificationsMs: 24 * HOUR,
  unsettledVerificationsMs: 30 * DAY,
  failedSettlementsMs: 90 * DAY,
  unusedMerchantsMs: 90 * DAY,
};

/** A walk over `total` rows, `keep` of them refused by the delete (kept): pages after a cursor, in order. */
function walk(name: string, total: number, calls: string[]) {
  const ids = Array.from({ length: total }, (_, i) => `${name}_${String(i).padStart(5, '0')}`);
  return async (after: RetentionCursor, limit: number): Promise<RetentionPage> => {
    const page = ids.filter((id) => id > after.id).slice(0, limit);
    calls.push(`${name} page after ${after.id || 'start'} (${page.length})`);
    return { ids: page, next: page.length < limit ? null : { at: new Date(NOW), id: page.at(-1)! } };
  };
}

/** Retention's stores in memory: what was asked of each, in order. */
function retentionDeps(rows: { failed?: number; unsettled?: number; rejected?: number; merchants?: number; secrets?: number; nonces?: number; keys?: number; deployments?: number; paymentIds?: number } = {}) {
  const calls: string[] = [];
  const batches = (name: string, total: number) => {
    let left = total;
    return async (before: Date, limit: number) => {
      const n = Math.min(limit, left);
      left -= n;
      calls.push(`${name} before ${before.toISOString()} (${n})`);
      return n;
    };
  };
  const failedPage = walk('stl', rows.failed ?? 0, calls);
  const unsettledPage = walk('ver', rows.unsettled ?? 0, calls);
  const rejectedPage = walk('rej', rows.rejected ?? 0, calls);
  const merchants = Array.from({ length: rows.merchants ?? 0 }, (_, i) => `0x${String(i).padStart(40, '0')}`);
  const deps: RetentionDeps = {
    settlements: {
      failedPage: async (before, after, limit) => (calls.push(`failed before ${before.toISOString()}`), failedPage(after, limit)),
      deleteFailed: async (ids) => (calls.push(`delete settlements ${ids.length}`), ids.length),
    },
    batches: { deleteItemsOfFailed: async (ids) => (calls.push(`delete batch items of ${ids.length}`), 0) },
    webhookEvents: {
      deleteOfSettlements: async (ids) => (calls.push(`delete events of settlements ${ids.length}`), 0),
      deleteOfVerifications: async (ids) => (calls.push(`delete events of verifications ${ids.length}`), 0),
    },
    verifications: {
      unsettledPage: async (rule, after, limit) => (calls.push(`unsettled valid before ${rule.validBefore} or made before ${rule.createdBefore.toISOString()}`), unsettledPage(after, limit)),
      rejectedPage: async (before, after, limit) => (calls.push(`rejected before ${before.toISOString()}`), rejectedPage(after, limit)),
      // one of each page is kept (a settlement appeared since the page was read)
      deleteUnreferenced: async (ids) => (calls.push(`delete verifications ${ids.length}`), Math.max(0, ids.length - 1)),
    },
    merchants: {
      deleteUnusedPage: async (before, after, limit) => {
        const page = merchants.filter((m) => m > after).slice(0, limit);
        calls.push(`merchants unseen since ${before.toISOString()} after ${after || 'start'} (${page.length})`);
        return { deleted: page.length, next: page.length < limit ? null : page.at(-1)! };
      },
      deleteRetiredSecrets: batches('retired secrets', rows.secrets ?? 0),
      deleteExpiredNonces: batches('nonces', rows.nonces ?? 0),
    },
    idempotencyKeys: { deleteExpired: batches('keys', rows.keys ?? 0) },
    walletDeployments: { deleteOlderThan: batches('wallet deployments', rows.deployments ?? 0) },
    paymentIdentifiers: { deleteUnsettled: batches('payment identifiers', rows.paymentIds ?? 0) },
    walletDeployWindowMs: HOUR,
    retention: RETENTION,
    logger: quiet,
    now: () => NOW,
  };
  return { deps, calls };
}

const ago = (ms: number) => new Date(NOW - ms).toISOString();

describe('runRetention', () => {
  it('deletes, in batches of 1,000 and dependants first, every kind of row strangers can make us store', async () => {
    const { deps, calls } = retentionDeps({ failed: 1_200, unsettled: 1_000, rejected: 2_500, merchants: 1_001, secrets: 3, nonces: 1_000, keys: 7, deployments: 2, paymentIds: 4 });
    expect(await runRetention(deps)).toEqual({
      failedSettlements: 1_200,
      unsettledVerifications: 999 + 0, // a full page (one kept), then an empty one
      rejectedVerifications: 999 + 999 + 499,
      unusedMerchants: 1_001,
      retiredWebhookSecrets: 3,
      merchantRequestNonces: 1_000,
      idempotencyKeys: 7,
      walletDeployments: 2,
      paymentIdentifiers: 4,
    });
    const validBefore = Math.floor((NOW - 24 * HOUR) / 1000);
    expect(calls).toEqual([
      `failed before ${ago(90 * DAY)}`,
      'stl page after start (1000)',
      'delete events of settlements 1000',
      'delete batch items of 1000',
      'delete settlements 1000',
      `failed before ${ago(90 * DAY)}`,
      'stl page after stl_00999 (200)',
      'delete events of settlements 200',
      'delete batch items of 200',
      'delete settlements 200',
      `unsettled valid before ${validBefore} or made before ${ago(30 * DAY)}`,
      'ver page after start (1000)',
      'delete events of verifications 1000',
      'delete verifications 1000',
      `unsettled valid before ${validBefore} or made before ${ago(30 * DAY)}`,
      'ver page after ver_00999 (0)',
      `rejected before ${ago(30 * DAY)}`,
      'rej page after start (1000)',
      'delete events of verifications 1000',
      'delete verifications 1000',
      `rejected before ${ago(30 * DAY)}`,
      'rej page after rej_00999 (1000)',
      'delete events of verifications 1000',
      'delete verifications 1000',
      `rejected before ${ago(30 * DAY)}`,
      'rej page after rej_01999 (500)',
      'delete events of verifications 500',
      'delete verifications 500',
      `merchants unseen since ${ago(90 * DAY)} after start (1000)`,
      `merchants unseen since ${ago(90 * DAY)} after 0x${String(999).padStart(40, '0')} (1)`,
      `retired secrets before ${ago(0)} (3)`,
      `nonces before ${ago(0)} (1000)`,
      `nonces before ${ago(0)} (0)`,
      `keys before ${ago(DAY)} (7)`,
      `wallet deployments before ${ago(HOUR)} (2)`,
      `payment identifiers before ${ago(30 * DAY)} (4)`,
    ]);
  });

  it('has nothing to delete on an empty database: one read of each', async () => {
    const { deps, calls } = retentionDeps();
    expect(Object.values(await runRetention(deps)).every((n) => n === 0)).toBe(true);
    expect(calls).toHaveLength(12);
  });
});

describe('maintenanceHandler', () => {
  const job = (name: string) => ({ name, data: {} }) as unknown as Job<MaintenanceJobData>;

  it('runs retention, the sweep and reorg watching by job name, and refuses an unknown job', async () => {
    const { deps } = retentionDeps();
    let swept = 0;
    const finality = { run: async () => ({ watched: 3, final: 1, reorged: 1, changed: 0 }) };
    const handler = maintenanceHandler({ ...deps, sweeper: { sweep: async () => (swept++, { settlements: 2, webhookEvents: 1 }) }, finality });
    expect(handler.concurrency).toBe(1);
    expect(await handler.process(job(JobName.Retention))).toMatchObject({ rejectedVerifications: 0, failedSettlements: 0, unusedMerchants: 0 });
    expect(await handler.process(job(JobName.Sweep))).toEqual({ settlements: 2, webhookEvents: 1 });
    expect(swept).toBe(1);
    expect(await handler.process(job(JobName.Finality))).toEqual({ watched: 3, final: 1, reorged: 1, changed: 0 });
    await expect(handler.process(job('vacuum'))).rejects.toThrow('unknown maintenance job vacuum');
  });
});
