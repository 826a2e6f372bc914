// `npm run bench:mixed`: verify and settle together, as production sees them, for BENCH_MIXED_SECONDS
// (default 60) against the compiled API cluster and one worker, on anvil with 1 s blocks (a realistic L2
// cadence; Base makes a block every 2 s) and 3 relayer keys.
//
// Verify and settle load run at once, each at a fixed rate (autocannon overallRate, an open loop, spread
// over each second by loadRunAtRate):
// - verify: Form A `POST /v1/verify`, a distinct valid payment per request (BENCH_MIXED_VERIFY_RATE/s);
// - settle: Form B `POST /v1/settle` `{verification_id, destination_address}` of payments verified before
//   the run (not timed), answering `pending` at once (BENCH_MIXED_SETTLE_RATE/s). Latency runs from the
//   request (client clock) to the worker's `settled` transition row in Postgres, as in bench:settle.
// Verify latency is autocannon's response time of each 200. Peak RSS of the API (primary + cluster
// workers) and of the worker are sampled over the run and the settlements' tail.
import { loadRunAtRate } from './autocannon-run';
import { machineInfo, versions, type MachineInfo } from './machine';
import { makeBodies, PaymentFactory } from './payments';
import { sampleRss, startCpuMeter, waitForQuietMachine, type CpuUsage, type RssPeak } from './proc';
import { blockTimeFromEnv, envNumber, log, runBenchmarkMain, table } from './results';
import { acceptedIds, offeredPerSecond, offerSettles, settleOutcome, verifyPayments, waitForFinal, type SettleOutcome, type SettleRequest } from './settle-load';
import { startSettleStack } from './settle-stack';
import { round, roundSummary, summarize, type LatencySummary } from './stats';

export interface MixedResults {
  benchmark: 'mixed';
  startedAt: string;
  machine: MachineInfo;
  versions: Record<string, string>;
  settings: {
    seconds: number;
    verifyRatePerSecond: number;
    settleRatePerSecond: number;
    /** null: automine */
    blockTimeSeconds: number | null;
    relayers: number;
    apiProcesses: number;
    warmupSettlements: number;
  };
  verify: {
    offeredPerSecond: number;
    verified: number;
    perSecond: number;
    latencyMs: LatencySummary;
    non200: Record<string, number>;
    firstNon200Body?: string;
    errors: number;
    timeouts: number;
  };
  settle: SettleOutcome & { offeredPerSecond: number };
  peakRss: { api: RssPeak; worker: RssPeak };
  /** CPU while the load ran (not the settlements' tail after it) */
  cpu: CpuUsage;
}

export async function runMixedBench(): Promise<MixedResults> {
  const verifyRate = envNumber('BENCH_MIXED_VERIFY_RATE', 500);
  const settings: MixedResults['settings'] = {
    seconds: envNumber('BENCH_MIXED_SECONDS', 60),
    verifyRatePerSecond: verifyRate,
    settleRatePerSecond: envNumber('BENCH_MIXED_SETTLE_RATE', 10),
    blockTimeSeconds: blockTimeFromEnv('BENCH_MIXED_BLOCK_TIME', 1) ?? null,
    relayers: 3,
    apiProcesses: envNumber('BENCH_API_PROCESSES', 2),
    warmupSettlements: envNumber('BENCH_MIXED_WARMUP', 20),
  };
  const settleCount = Math.round(settings.settleRatePerSecond * settings.seconds);
  const busy = await waitForQuietMachine();
  if (busy > 0.15) log(`machine still ${Math.round(busy * 100)}% busy with other work; measuring anyway`);
  const startedAt = new Date().toISOString();
  const stack = await startSettleStack({
    blockTime: settings.blockTimeSeconds ?? undefined,
    relayers: settings.relayers,
    settlements: settings.warmupSettlements + settleCount,
    apiProcesses: settings.apiProcesses,
  });
  const { devnet, db, api } = stack;
  const worker = stack.workers[0];
  try {
    const factory = new PaymentFactory(devnet);
    log(`verifying ${settings.warmupSettlements + settleCount} payments to settle (not timed)`);
    const ids = await verifyPayments(api.url, factory, settings.warmupSettlements + settleCount);
    const requests: SettleRequest[] = ids.map((verificationId) => ({ verificationId, requestedAt: 0 }));
    // signed before the run: signing during it would take CPU from the servers measured (10% spare)
    const bodies = makeBodies(factory, Math.ceil(verifyRate * (settings.seconds + 3) * 1.1));
    let nextBody = 0;
    const verifyLoad = { url: api.url, path: '/v1/verify', ratePerSecond: verifyRate, nextBody: () => bodies[nextBody++ % bodies.length] };

    // Not measured: cold code in the worker (first settlements) and in the API processes (first verifies).
    const warmup = requests.slice(0, settings.warmupSettlements);
    await Promise.all([offerSettles(api.url, devnet, warmup, { connections: 8 }), loadRunAtRate({ ...verifyLoad, seconds: 3 })]);
    await waitForFinal(db, acceptedIds(warmup), 60_000);

    log(`measuring ${settings.seconds} s: verify ${verifyRate}/s and settle ${settings.settleRatePerSecond}/s`);
    const settleRequests = requests.slice(settings.warmupSettlements);
    const apiRss = sampleRss(api.child.pid!);
    const workerRss = sampleRss(worker.child.pid!);
    const cpu = startCpuMeter({ trees: stack.cpuTrees });
    const [verifyRun] = await Promise.all([
      loadRunAtRate({ ...verifyLoad, seconds: settings.seconds }),
      offerSettles(api.url, devnet, settleRequests, { ratePerSecond: settings.settleRatePerSecond }),
    ]);
    const cpuUsage = cpu.stop();
    await waitForFinal(db, acceptedIds(settleRequests), 60_000);
    const peakRss = { api: apiRss.stop(), worker: workerRss.stop() };
    const settle = await settleOutcome(db, settleRequests, settings.seconds);
    return {
      benchmark: 'mixed',
      startedAt,
      machine: machineInfo(),
      versions: await versions(),
      settings,
      verify: {
        offeredPerSecond: verifyRate,
        verified: verifyRun.ok,
        perSecond: round(verifyRun.ok / verifyRun.durationSeconds, 1),
        latencyMs: roundSummary(summarize(verifyRun.okLatenciesMs)),
        non200: verifyRun.otherStatuses,
        firstNon200Body: verifyRun.firstOtherBody,
        errors: verifyRun.errors,
        timeouts: verifyRun.timeouts,
      },
      settle: { ...settle, offeredPerSecond: offeredPerSecond(settleRequests) },
      peakRss,
      cpu: cpuUsage,
    };
  } finally {
    await stack.stop();
  }
}

export function printMixed(r: MixedResults): void {
  const v = r.verify;
  const s = r.settle;
  const rows: Array<Array<string | number>> = [
    ['traffic', 'offered/s', 'done/s', 'p50 ms', 'p95 ms', 'p99 ms', 'done', 'not done'],
    ['verify (response)', v.offeredPerSecond, v.perSecond, v.latencyMs.p50, v.latencyMs.p95, v.latencyMs.p99, v.verified, Object.values(v.non200).reduce((a, b) => a + b, 0) + v.errors],
    ['settle (request → settled)', s.offeredPerSecond, s.perSecond, s.latencyMs.p50, s.latencyMs.p95, s.latencyMs.p99, s.settled, s.failed + s.unfinished + s.rejected],
  ];
  process.stdout.write(`\nmixed verify + settle, ${r.settings.seconds} s, ${r.settings.blockTimeSeconds === null ? 'automine' : `${r.settings.blockTimeSeconds} s blocks`} — ${r.machine.cpuModel}, ${r.machine.cores} cores\n${table(rows)}\n`);
  process.stdout.write(`peak RSS: API ${r.peakRss.api.totalMiB} MiB (${r.peakRss.api.perProcessMiB.join(', ')}), worker ${r.peakRss.worker.totalMiB} MiB\n`);
  process.stdout.write(`CPU (cores): ${JSON.stringify(r.cpu.cores)}; machine ${Math.round(r.cpu.machineBusy * 100)}% busy\n`);
  if (v.firstNon200Body) process.stdout.write(`first non-200 verify answer: ${v.firstNon200Body}\n`);
}

if (require.main === module) runBenchmarkMain('mixed', runMixedBench, printMixed);
