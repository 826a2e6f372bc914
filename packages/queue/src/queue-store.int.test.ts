// The same queue behaviour on both datastores, against a real Redis and a real PostgreSQL: a job is
// added, run, fails for good, is retried and completes; counts and readiness answer throughout.
import { randomBytes } from 'node:crypto';
import type { Job } from 'bullmq';
import { createEmptyDatabase, type EmptyTestDatabase } from '../../../test/support/database';
import { REDIS_URL } from '../../../test/support/test-stack';
import { redisMissingReason } from '../../../test/support/test-services';
import { deleteQueueKeys } from './delete-queue-keys';
import { openQueueStore, type QueueStore, type QueueStoreTarget } from './queue-store';
import { setTimeout as sleep } from 'node:timers/promises';

let database: EmptyTestDatabase;
const prefix = `qs${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  database = await createEmptyDatabase();
});
afterAll(async () => {
  await database?.drop();
  if (!redisMissing) await deleteQueueKeys(REDIS_URL, prefix);
});

const redisMissing = redisMissingReason();
if (redisMissing) process.stdout.write(`skipped "QueueStore on redis": it needs Redis itself and ${redisMissing}\n`);
const targets: Array<[string, () => QueueStoreTarget]> = [
  ...(redisMissing ? [] : [['redis', () => ({ backend: 'redis', redis: { url: REDIS_URL }, prefix })] as [string, () => QueueStoreTarget]]),
  ['postgres', () => ({ backend: 'postgres', databaseUrl: database.url, poolMax: 4 })],
];

async function waitFor(what: string, condition: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 15_000; !(await condition()); await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
  }
}

describe.each(targets)('QueueStore on %s', (backend, target) => {
  let store: QueueStore;
  beforeEach(() => {
    store = openQueueStore(target());
  });
  afterEach(async () => {
    await store.close();
  });

  it('runs a job, lets a failed one be retried, and counts both', async () => {
    const queues = store.openQueues();
    let answer: 'fail' | 'succeed' = 'fail';
    const ran: string[] = [];
    const worker = store.openWorker(
      'webhook',
      async (job: Job) => {
        ran.push(String(job.id));
        if (answer === 'fail') throw new Error('receiver down');
        return { delivered: true };
      },
      { concurrency: 2, settings: { backoffStrategy: () => 10 } },
    );
    try {
      expect(store.backend).toBe(backend);
      expect(store.redis !== undefined).toBe(backend === 'redis');
      await queues.webhook.add('deliver', { eventId: 'evt_1' }, { jobId: 'evt_1', attempts: 2 });
      await waitFor('the job failed twice', async () => (await queues.webhook.getJobCounts('failed')).failed === 1);
      expect(ran).toEqual(['evt_1', 'evt_1']);
      await store.readiness.check();

      answer = 'succeed';
      await (await queues.webhook.getJob('evt_1'))!.retry('failed');
      await waitFor('the retried job completed', async () => (await queues.webhook.getJobCounts('completed')).completed === 1);
      expect(await queues.webhook.getJobCounts('failed', 'completed', 'waiting')).toEqual({ failed: 0, completed: 1, waiting: 0 });
      expect(ran).toHaveLength(3);
      // a job id is a settlement's or an event's own id: adding it again does not run it twice
      await queues.webhook.add('deliver', { eventId: 'evt_1' }, { jobId: 'evt_1' });
      expect(await queues.webhook.getJobCounts('completed', 'waiting')).toEqual({ completed: 1, waiting: 0 });
    } finally {
      await worker.close();
      await queues.close();
    }
  });
});

it('a readiness check of the PostgreSQL store fails when its database does not answer', async () => {
  const url = new URL(database.url);
  url.port = '1';
  const store = openQueueStore({ backend: 'postgres', databaseUrl: url.toString(), poolMax: 1 });
  const queues = store.openQueues(() => {});
  try {
    await expect(store.readiness.check()).rejects.toThrow();
  } finally {
    await queues.close().catch(() => {});
  }
});
