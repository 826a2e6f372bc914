import { PassThrough } from 'node:stream';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { WEBHOOK_RETRY_DELAYS_MS } from '@facilitator/config';
import { createLogger, createSilentLogger } from '@facilitator/logging';
import { createMetrics } from '@facilitator/metrics';
import { WEBHOOK_ATTEMPTS, queueDefaults } from '@facilitator/queue';
import type { AttemptResult, WebhookDelivery } from '@facilitator/webhooks';
import { holdDelayMs, webhookBackoff, webhookHandler } from './webhook-handler';

const MINUTE = 60_000;

/** A delivery that answers as told, recording each call. */
function fakeDelivery(answer: () => Promise<AttemptResult>) {
  const calls: Array<{ eventId: string; lastAttempt: boolean }> = [];
  const delivery: Pick<WebhookDelivery, 'attempt'> = {
    attempt: async (eventId, lastAttempt) => {
      calls.push({ eventId, lastAttempt });
      return answer();
    },
  };
  return { delivery, calls };
}

// BullMQ's Job is a class bound to a queue; the handler reads only these three fields of it
const job = (attemptsMade: number, attempts: number | undefined = WEBHOOK_ATTEMPTS) =>
  ({ data: { eventId: 'evt_1' }, attemptsMade, opts: attempts === undefined ? {} : { attempts } }) as unknown as Job;

async function attemptCounts(metrics: ReturnType<typeof createMetrics>) {
  const { values } = await metrics.webhookAttempts.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.outcome), v.value]));
}

function setup(answer: () => Promise<AttemptResult>, logger = createSilentLogger()) {
  const { delivery, calls } = fakeDelivery(answer);
  const metrics = createMetrics('worker');
  const handler = webhookHandler(delivery, logger, 4, WEBHOOK_RETRY_DELAYS_MS, metrics);
  return { handler, calls, metrics };
}

describe('webhook back-off', () => {
  it('follows the spec’s schedule by default: 1 min, 5 min, 15 min, 30 min, 1 h', () => {
    expect(WEBHOOK_RETRY_DELAYS_MS).toEqual([1 * MINUTE, 5 * MINUTE, 15 * MINUTE, 30 * MINUTE, 60 * MINUTE]);
    expect([1, 2, 3, 4, 5].map(webhookBackoff(WEBHOOK_RETRY_DELAYS_MS))).toEqual([MINUTE, 5 * MINUTE, 15 * MINUTE, 30 * MINUTE, 60 * MINUTE]);
  });

  it('gives every retry a delay: one attempt, then one per delay (6 in all)', () => {
    expect(WEBHOOK_ATTEMPTS).toBe(WEBHOOK_RETRY_DELAYS_MS.length + 1);
    expect(queueDefaults.webhook).toMatchObject({ attempts: WEBHOOK_ATTEMPTS, backoff: { type: 'webhook' } });
  });

  it('waits the last delay again past the end of the schedule', () => {
    expect([6, 7, 50].map(webhookBackoff(WEBHOOK_RETRY_DELAYS_MS))).toEqual([60 * MINUTE, 60 * MINUTE, 60 * MINUTE]);
  });

  it('uses the configured delays (WEBHOOK_RETRY_DELAYS_MS), as the handler’s backoff', () => {
    const { delivery } = fakeDelivery(async () => ({ outcome: 'delivered' }));
    const handler = webhookHandler(delivery, createSilentLogger(), 4, [100, 250], createMetrics('worker'));
    expect(handler.concurrency).toBe(4);
    expect([1, 2, 3].map((n) => handler.backoff?.(n))).toEqual([100, 250, 250]);
  });
});

describe('webhookHandler', () => {
  it('completes the job when the event was delivered', async () => {
    const { handler, calls, metrics } = setup(async () => ({ outcome: 'delivered' }));
    await expect(handler.process(job(0))).resolves.toEqual({ delivered: true });
    expect(calls).toEqual([{ eventId: 'evt_1', lastAttempt: false }]);
    expect(await attemptCounts(metrics)).toEqual({ delivered: 1 });
  });

  it('fails the job with the outcome so BullMQ retries it, and logs the attempt', async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
    const { handler, metrics } = setup(async () => ({ outcome: 'retry', error: 'http_503' }), createLogger({ service: 'worker', stream }));

    const error = await handler.process(job(2)).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(UnrecoverableError);
    expect((error as Error).message).toBe('http_503');
    expect(await attemptCounts(metrics)).toEqual({ retry: 1 });

    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({ level: 'info', message: 'webhook attempt failed', eventId: 'evt_1', attempt: 3, error: 'http_503' }),
    ]);
  });

  it('fails the job for good when the delivery gave up', async () => {
    const { handler, metrics } = setup(async () => ({ outcome: 'failed', error: 'timeout' }));
    const error = await handler.process(job(5)).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(UnrecoverableError);
    expect((error as Error).message).toBe('delivery failed after 6 attempts: timeout');
    expect(await attemptCounts(metrics)).toEqual({ failed: 1 });
  });

  it('tells the delivery which attempt is the last of the round (the job’s attempts, else 6)', async () => {
    const { handler, calls } = setup(async () => ({ outcome: 'delivered' }));
    for (const [made, attempts] of [[0, 6], [4, 6], [5, 6], [0, 1], [1, 3], [2, 3], [4, undefined], [5, undefined]] as const) {
      await handler.process(job(made, attempts));
    }
    expect(calls.map((c) => c.lastAttempt)).toEqual([false, false, true, true, false, true, false, true]);
  });

  it('lets an error of the delivery itself (e.g. the database) through as a retry, counting no attempt', async () => {
    const { handler, metrics } = setup(async () => {
      throw new Error('connection terminated');
    });
    const error = await handler.process(job(0)).catch((err: unknown) => err);
    expect(error).not.toBeInstanceOf(UnrecoverableError);
    expect((error as Error).message).toBe('connection terminated');
    expect(await attemptCounts(metrics)).toEqual({});
  });

  it('moves a held delivery back to delayed without counting an attempt, backing off while it stays held', async () => {
    const { handler, metrics } = setup(async () => ({ outcome: 'held', reason: 'receiver_busy', retryAfterMs: 300 }));
    const moves: Array<{ until: number; token?: string }> = [];
    // started 4 times, 1 attempt failed: this is its third hold in all
    const heldJob = { ...job(1), attemptsStarted: 4, moveToDelayed: async (until: number, token?: string) => void moves.push({ until, token }) } as unknown as Job;
    const before = Date.now();
    await expect(handler.process(heldJob, 'lock-token')).rejects.toBeInstanceOf(DelayedError);
    expect(moves).toHaveLength(1);
    expect(moves[0].token).toBe('lock-token');
    // 250 ms × 2² spread ±50%
    expect(moves[0].until - before).toBeGreaterThanOrEqual(500);
    expect(moves[0].until - before).toBeLessThan(1_600);
    expect(await attemptCounts(metrics)).toEqual({ held: 1 });
  });
});

describe('holdDelayMs', () => {
  it('behind a busy receiver: 250 ms doubling per hold of the job, spread ±50%, at most 30 s', () => {
    const busy = (retryAfterMs: number) => ({ reason: 'receiver_busy', retryAfterMs });
    const middle = () => 0.5;
    expect(holdDelayMs(busy(0), 0, middle)).toBe(250);
    expect(holdDelayMs(busy(0), 1, middle)).toBe(500);
    expect(holdDelayMs(busy(0), 4, middle)).toBe(4_000);
    expect(holdDelayMs(busy(0), 50, middle)).toBe(30_000);
    expect(holdDelayMs(busy(0), 0, () => 0)).toBe(125);
    expect(holdDelayMs(busy(0), 0, () => 0.999)).toBe(375);
    expect(holdDelayMs(busy(1_500), 0, middle)).toBe(1_500);
  });

  it('behind an open breaker: what the gate said (its cool-down, or until overdue), at most 30 s', () => {
    expect(holdDelayMs({ reason: 'circuit_open', retryAfterMs: 250 }, 7)).toBe(250);
    expect(holdDelayMs({ reason: 'circuit_open', retryAfterMs: 25_000 }, 0)).toBe(25_000);
    expect(holdDelayMs({ reason: 'circuit_open', retryAfterMs: 600_000 }, 0)).toBe(30_000);
  });
});
