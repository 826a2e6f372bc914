// `npm run bench:webhooks`: webhook deliveries per second through the real worker process, and the latency
// from the moment an event is published to its arrival at a receiver.
//
// The path, faithful but fast: events are published with the webhooks package's WebhookOutbox.publish —
// the call the API makes for verification.completed (row in webhook_events, then a job on the webhook
// queue whose id is the event id) — from this process, for verifications made through the API beforehand
// (not timed; the API is stopped before measuring, so only the worker serves). Driving real settlements
// instead would cap the event rate at settlements/s, far below what delivery can do, and
// measure the chain. The compiled worker (apps/worker/dist/main.js, both queues as deployed) consumes the
// queue and POSTs each signed event to a plain node:http receiver in this process, which checks the
// signature with the package's verifyWebhookDelivery, answers 200 and records the arrival time.
//
// The receiver is on 127.0.0.1, which the worker's address policy refuses in production: the worker runs
// with WEBHOOK_ALLOW_PRIVATE=true (what the tests use) and so NODE_ENV=development (production refuses it).
//
// Phases: **steady**, events published at a fixed rate (latency with little queueing); **burst**, events
// published as fast as `publishers` concurrent calls allow while the worker delivers (arrivals per second
// from the first publish to the last arrival; on two cores the publisher, which production runs in the
// API, takes a share of the CPU); **backlog**, the same number of events stored and queued while the queue
// is paused (as after a receiver outage or a flood), then delivered: the worker's delivery capacity,
// arrivals per second from the resume to the last arrival.
import { createServer, type Server } from 'node:http';
import { Wallet } from 'ethers';
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { MerchantAction, signMerchantRequest } from '@facilitator/merchants';
import { createPgPool, createPrismaClient, WebhookEventRepository } from '@facilitator/db';
import { createQueues, createRedisConnection } from '@facilitator/queue';
import { verifyWebhookDelivery, WebhookEventMac, WebhookEventType, WebhookOutbox } from '@facilitator/webhooks';
import { machineInfo, versions, type MachineInfo } from './machine';
import { PaymentFactory } from './payments';
import { sampleRss, startCpuMeter, waitForQuietMachine, type CpuUsage, type RssPeak } from './proc';
import { envNumber, log, runBenchmarkMain, table } from './results';
import { verifyPayments } from './settle-load';
import { cleanupOnSignal, createDatabase, deleteRedisKeys, freePort, profilingArgs, REDIS_URL, stackEnv, startApi, startWorker } from './stack';
import { epochMs, round, roundSummary, summarize, type LatencySummary } from './stats';
import { setTimeout as sleep } from 'node:timers/promises';

export interface WebhookPhase {
  load: string;
  published: number;
  /** publish calls per second achieved (what was offered to the worker) */
  publishedPerSecond: number;
  arrived: number;
  /** arrivals per second from the first publish to the last arrival */
  perSecond: number;
  /** publish → arrival at the receiver, ms */
  latencyMs: LatencySummary;
  /** events not delivered by the end, deliveries with a bad signature, attempts the worker recorded as failed */
  notArrived: number;
  badSignatures: number;
  failedAttempts: number;
  /** the same event_id arriving twice (allowed by the spec, counted to see it) */
  duplicates: number;
  workerPeakRss: RssPeak;
  cpu: CpuUsage;
}

export interface WebhookResults {
  benchmark: 'webhooks';
  startedAt: string;
  machine: MachineInfo;
  versions: Record<string, string>;
  settings: { warmupCount: number; rate: number; seconds: number; burstCount: number; publishers: number; webhookConcurrency: string; workerLogLevel: string };
  /** RSS once started and idle */
  workerRssAfterStart: RssPeak;
  steady: WebhookPhase;
  burst: WebhookPhase;
  backlog: WebhookPhase;
}

const MASTER_SECRET = 'bench-webhook-master-secret-0123456789';
/** the devnet merchant's own webhook secret, fetched before measuring (events are signed with it) */
let merchantSecret = '';

async function fetchMerchantSecret(apiUrl: string, devnet: Devnet): Promise<string> {
  const merchant = new Wallet(devnet.accounts.merchant.privateKey);
  const proof = await signMerchantRequest(merchant, {
    action: MerchantAction.GetWebhookSecret,
    merchant: merchant.address,
    network: { caip2: `eip155:${devnet.chainId}`, chainId: devnet.chainId },
    treasury: devnet.accounts.treasury.address,
  });
  const res = await fetch(`${apiUrl}/v1/merchants/${merchant.address}/webhook-secret`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ proof }) });
  if (!res.ok) throw new Error(`webhook-secret: HTTP ${res.status}`);
  return ((await res.json()) as { secret: string }).secret;
}

/** The merchant's side: checks each delivery's HMAC as a receiver must, answers 200, records the arrival. */
function startReceiver(port: number) {
  const arrivals = new Map<string, number>();
  const counts = { badSignatures: 0, duplicates: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = epochMs();
      const check = verifyWebhookDelivery(Buffer.concat(chunks).toString('utf8'), req.headers['x-webhook-signature'] as string | undefined, merchantSecret);
      if (!check.valid) {
        counts.badSignatures++;
        res.writeHead(401).end();
        return;
      }
      const id = check.payload.event_id as string;
      if (arrivals.has(id)) counts.duplicates++;
      else arrivals.set(id, at);
      res.writeHead(200).end();
    });
  });
  return {
    arrivals,
    counts,
    url: `http://127.0.0.1:${port}/hooks`,
    listen: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function runWebhookBench(): Promise<WebhookResults> {
  const settings: WebhookResults['settings'] = {
    warmupCount: envNumber('BENCH_WEBHOOK_WARMUP', 200),
    rate: envNumber('BENCH_WEBHOOK_RATE', 100),
    seconds: envNumber('BENCH_WEBHOOK_SECONDS', 5),
    burstCount: envNumber('BENCH_WEBHOOK_BURST', 3000),
    publishers: envNumber('BENCH_WEBHOOK_PUBLISHERS', 16),
    webhookConcurrency: process.env.BENCH_WEBHOOK_CONCURRENCY ?? '20 (default)',
    workerLogLevel: 'info',
  };
  const steadyCount = Math.round(settings.rate * settings.seconds);
  const total = settings.warmupCount + steadyCount + 2 * settings.burstCount;
  const busy = await waitForQuietMachine();
  if (busy > 0.15) log(`machine still ${Math.round(busy * 100)}% busy with other work; measuring anyway`);
  const startedAt = new Date().toISOString();
  const [devnet, database] = await Promise.all([startDevnet(), createDatabase()]);
  const env = stackEnv(devnet, database.url, { NODE_ENV: 'development', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_SECRET: MASTER_SECRET, API_PROCESSES: '1' });
  const receiver = startReceiver(await freePort());
  await receiver.listen();
  const prisma = createPrismaClient(database.url, { poolMax: settings.publishers });
  const pool = createPgPool(database.url, settings.publishers);
  const producer = createRedisConnection({ url: REDIS_URL }, 'producer');
  const queues = createQueues(producer, env.QUEUE_PREFIX);
  const outbox = new WebhookOutbox(new WebhookEventRepository(prisma, pool), queues, new WebhookEventMac(MASTER_SECRET));
  const stops: Array<() => Promise<void>> = [];
  const teardown = async () => {
    for (const stop of stops.reverse()) await stop();
    await queues.close();
    producer.disconnect();
    await prisma.$disconnect();
    await pool.end();
    await receiver.close();
    await devnet.stop();
    await Promise.all([database.drop(), deleteRedisKeys(env.QUEUE_PREFIX)]);
  };
  const unregister = cleanupOnSignal(teardown);
  try {
    log(`verifying ${total} payments for the events to belong to (not timed)`);
    const api = await startApi(env);
    stops.push(() => api.stop());
    merchantSecret = await fetchMerchantSecret(api.url, devnet);
    const verificationIds = await verifyPayments(api.url, new PaymentFactory(devnet), total);
    await api.stop(); // only the worker serves while measuring (a second stop() is a no-op)

    const concurrency: Record<string, string> = process.env.BENCH_WEBHOOK_CONCURRENCY ? { WEBHOOK_CONCURRENCY: process.env.BENCH_WEBHOOK_CONCURRENCY } : {};
    const worker = await startWorker({ ...env, ...concurrency, LOG_LEVEL: settings.workerLogLevel }, profilingArgs());
    stops.push(() => worker.stop());
    const workerRssAfterStart = sampleRss(worker.child.pid!).stop();
    const trees = { worker: worker.child.pid!, anvil: devnet.pid, bench: process.pid };

    // the same event the API publishes for a verification with a webhook_url (verification-events.ts)
    const published = new Map<string, number>();
    const publish = async (verificationId: string) => {
      const at = epochMs();
      const payload = await outbox.publish({
        type: WebhookEventType.VerificationCompleted,
        url: receiver.url,
        verificationId,
        merchant: devnet.accounts.merchant.address,
        status: 'verified',
        data: { payer_address: devnet.accounts.payer.address.toLowerCase(), merchant_address: devnet.accounts.merchant.address.toLowerCase(), verified_amount: '10000', verified_token: devnet.token.toLowerCase(), chain: `eip155:${devnet.chainId}` },
      });
      published.set(payload.event_id, at);
      return payload.event_id;
    };
    const publishConcurrently = async (ids: string[], publishers: number) => {
      const eventIds: string[] = [];
      let next = 0;
      const one = async () => {
        while (next < ids.length) eventIds.push(await publish(ids[next++]));
      };
      await Promise.all(Array.from({ length: publishers }, one));
      return eventIds;
    };
    // events are in-process calls, not HTTP requests: a timed loop offers them (autocannon cannot)
    const publishAtRate = async (ids: string[], rate: number) => {
      const start = epochMs();
      const pending: Promise<string>[] = [];
      for (let i = 0; i < ids.length; i++) {
        const wait = start + (i * 1000) / rate - epochMs();
        if (wait > 0) await sleep(wait);
        pending.push(publish(ids[i]));
      }
      return Promise.all(pending);
    };
    const waitForArrivals = async (eventIds: string[], timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline && eventIds.some((id) => !receiver.arrivals.has(id))) await sleep(50);
    };

    /** `offer` publishes the phase's events; `release`, when given, lets delivery begin afterwards and says when */
    const runPhase = async (load: string, offer: () => Promise<string[]>, release?: () => Promise<number>): Promise<WebhookPhase> => {
      const before = { ...receiver.counts };
      const rss = sampleRss(worker.child.pid!);
      const offerStart = epochMs();
      let cpu = startCpuMeter({ trees });
      const eventIds = await offer();
      const offerSeconds = (epochMs() - offerStart) / 1000;
      let releasedAt: number | undefined;
      if (release) {
        cpu.stop();
        cpu = startCpuMeter({ trees });
        releasedAt = await release();
      }
      await waitForArrivals(eventIds, envNumber('BENCH_WEBHOOK_TIMEOUT_SECONDS', 60) * 1000);
      const cpuUsage = cpu.stop();
      const workerPeakRss = rss.stop();
      const latencies: number[] = [];
      let first = Infinity;
      let last = 0;
      for (const id of eventIds) {
        const publishedAt = published.get(id)!;
        first = Math.min(first, releasedAt ?? publishedAt);
        const arrivedAt = receiver.arrivals.get(id);
        if (arrivedAt === undefined) continue;
        last = Math.max(last, arrivedAt);
        latencies.push(arrivedAt - publishedAt);
      }
      // every attempt that did not end in a 2xx stores its error (a timeout, a refused address, a status)
      const failedAttempts = await prisma.webhookAttempt.count({ where: { eventId: { in: eventIds }, error: { not: null } } });
      return {
        load,
        published: eventIds.length,
        publishedPerSecond: round(eventIds.length / offerSeconds, 1),
        arrived: latencies.length,
        perSecond: latencies.length ? round(latencies.length / ((last - first) / 1000), 1) : 0,
        latencyMs: roundSummary(summarize(latencies), 1),
        notArrived: eventIds.length - latencies.length,
        badSignatures: receiver.counts.badSignatures - before.badSignatures,
        failedAttempts,
        duplicates: receiver.counts.duplicates - before.duplicates,
        workerPeakRss,
        cpu: cpuUsage,
      };
    };

    // Not measured: the worker's first jobs run cold code (V8, Prisma compiling each query shape once).
    log(`warm-up: ${settings.warmupCount} events`);
    const warm = await publishConcurrently(verificationIds.slice(0, settings.warmupCount), 8);
    await waitForArrivals(warm, 30_000);

    log(`steady: ${settings.rate} events/s for ${settings.seconds} s`);
    const steadyIds = verificationIds.slice(settings.warmupCount, settings.warmupCount + steadyCount);
    const steady = await runPhase(`${settings.rate} events/s for ${settings.seconds} s`, () => publishAtRate(steadyIds, settings.rate));
    log(`burst: ${settings.burstCount} events, ${settings.publishers} publishers`);
    const burstIds = verificationIds.slice(settings.warmupCount + steadyCount, settings.warmupCount + steadyCount + settings.burstCount);
    const burst = await runPhase(`${settings.burstCount} events, ${settings.publishers} concurrent publishers`, () => publishConcurrently(burstIds, settings.publishers));
    log(`backlog: ${settings.burstCount} events queued while the queue is paused, then delivered`);
    const backlogIds = verificationIds.slice(settings.warmupCount + steadyCount + settings.burstCount);
    const backlog = await runPhase(
      `${settings.burstCount} events queued, then the queue resumed`,
      async () => {
        await queues.webhook.pause();
        return publishConcurrently(backlogIds, settings.publishers);
      },
      async () => {
        const at = epochMs();
        await queues.webhook.resume();
        return at;
      },
    );
    return { benchmark: 'webhooks', startedAt, machine: machineInfo(), versions: await versions(), settings, workerRssAfterStart, steady, burst, backlog };
  } finally {
    unregister();
    await teardown();
  }
}

export function printWebhooks(r: WebhookResults): void {
  const rows: Array<Array<string | number>> = [['phase', 'published/s', 'delivered/s', 'p50 ms', 'p95 ms', 'p99 ms', 'arrived', 'not arrived', 'bad sig', 'failed attempts', 'worker peak MiB']];
  for (const [name, p] of [['steady', r.steady], ['burst', r.burst], ['backlog', r.backlog]] as const) {
    rows.push([name, p.publishedPerSecond, p.perSecond, p.latencyMs.p50, p.latencyMs.p95, p.latencyMs.p99, p.arrived, p.notArrived, p.badSignatures, p.failedAttempts, p.workerPeakRss.totalMiB]);
  }
  process.stdout.write(`\nwebhook deliveries — ${r.machine.cpuModel}, ${r.machine.cores} cores, node ${r.machine.node}\n${table(rows)}\n`);
  process.stdout.write(`CPU (cores) steady ${JSON.stringify(r.steady.cpu.cores)}; burst ${JSON.stringify(r.burst.cpu.cores)}; backlog ${JSON.stringify(r.backlog.cpu.cores)}\n`);
}

if (require.main === module) runBenchmarkMain('webhooks', runWebhookBench, printWebhooks);
