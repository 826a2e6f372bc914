// `npm run bench:settle-curve`: settlement latency against offered load. One stack (anvil with 1 s blocks
// by default, 3 relayer keys, the compiled API cluster and one worker); for each offered rate in turn,
// settle requests (Form B, payments verified before, not timed) are offered by autocannon at that rate
// (overallRate, spread over each second) for BENCH_CURVE_STEP_SECONDS, then every one of them is waited
// for before the next rate, so steps do not overlap. Per step: request→`settled` p50/p95/p99 (as in
// bench:settle) and settled/s achieved. Writes bench/results/settle-curve.json and the plot
// settle-latency-vs-load.svg. One chain mode only, so the default sweep stays near 1.5 min: 1 s blocks
// show what a merchant waits for on an L2; BENCH_CURVE_BLOCK_TIME=automine shows the pipeline alone.
import path from 'node:path';
import { machineInfo, versions, type MachineInfo } from './machine';
import { PaymentFactory } from './payments';
import { sampleRss, startCpuMeter, waitForQuietMachine, type RssPeak } from './proc';
import { blockTimeFromEnv, envNumber, log, RESULTS_DIR, runBenchmarkMain, table, writeResultFile } from './results';
import { acceptedIds, offeredPerSecond, offerSettles, settleOutcome, verifyPayments, waitForFinal, type SettleRequest } from './settle-load';
import { startSettleStack } from './settle-stack';
import { svgDocument } from './svg-chart';

export const CURVE_SVG = 'settle-latency-vs-load.svg';

export interface CurveStep {
  offeredPerSecond: number;
  /** what autocannon achieved */
  sentPerSecond: number;
  requested: number;
  settled: number;
  failed: number;
  unfinished: number;
  rejected: number;
  settledPerSecond: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  /** cores the worker used over the step (offer and drain) */
  workerCores: number;
}

export interface CurveResults {
  benchmark: 'settle-curve';
  startedAt: string;
  machine: MachineInfo;
  versions: Record<string, string>;
  settings: { rates: number[]; stepSeconds: number; blockTimeSeconds: number | null; relayers: number; apiProcesses: number; warmupSettlements: number };
  steps: CurveStep[];
  peakRss: { api: RssPeak; worker: RssPeak };
  /** path of the SVG, relative to the results directory */
  svg: string;
}

function rates(): number[] {
  const raw = process.env.BENCH_CURVE_RATES ?? '5,10,20,40,60,80,100,120';
  const list = raw.split(',').map(Number);
  if (list.some((r) => !(r > 0))) throw new Error(`BENCH_CURVE_RATES must be positive numbers, got ${JSON.stringify(raw)}`);
  return list;
}

export async function runSettleCurve(): Promise<CurveResults> {
  const settings: CurveResults['settings'] = {
    rates: rates(),
    stepSeconds: envNumber('BENCH_CURVE_STEP_SECONDS', 4),
    blockTimeSeconds: blockTimeFromEnv('BENCH_CURVE_BLOCK_TIME', 1) ?? null,
    relayers: 3,
    apiProcesses: envNumber('BENCH_API_PROCESSES', 2),
    warmupSettlements: envNumber('BENCH_CURVE_WARMUP', 20),
  };
  const counts = settings.rates.map((r) => Math.round(r * settings.stepSeconds));
  const total = settings.warmupSettlements + counts.reduce((a, b) => a + b, 0);
  const busy = await waitForQuietMachine();
  if (busy > 0.15) log(`machine still ${Math.round(busy * 100)}% busy with other work; measuring anyway`);
  const startedAt = new Date().toISOString();
  const stack = await startSettleStack({ blockTime: settings.blockTimeSeconds ?? undefined, relayers: settings.relayers, settlements: total, apiProcesses: settings.apiProcesses });
  const { devnet, db, api } = stack;
  const worker = stack.workers[0];
  try {
    log(`verifying ${total} payments (not timed)`);
    const ids = await verifyPayments(api.url, new PaymentFactory(devnet), total);
    const requests: SettleRequest[] = ids.map((verificationId) => ({ verificationId, requestedAt: 0 }));
    const warmup = requests.slice(0, settings.warmupSettlements);
    await offerSettles(api.url, devnet, warmup, { connections: 8 });
    await waitForFinal(db, acceptedIds(warmup), 60_000);

    const apiRss = sampleRss(api.child.pid!);
    const workerRss = sampleRss(worker.child.pid!);
    const steps: CurveStep[] = [];
    let offset = settings.warmupSettlements;
    for (const [i, rate] of settings.rates.entries()) {
      const stepRequests = requests.slice(offset, offset + counts[i]);
      offset += counts[i];
      log(`offering ${rate} settlements/s for ${settings.stepSeconds} s`);
      const cpu = startCpuMeter({ trees: stack.cpuTrees });
      await offerSettles(api.url, devnet, stepRequests, { ratePerSecond: rate });
      await waitForFinal(db, acceptedIds(stepRequests), envNumber('BENCH_CURVE_STEP_TIMEOUT_SECONDS', 60) * 1000);
      const workerCores = cpu.stop().cores.worker ?? 0;
      const o = await settleOutcome(db, stepRequests, stepRequests.length / rate);
      steps.push({
        offeredPerSecond: rate,
        sentPerSecond: offeredPerSecond(stepRequests),
        requested: o.requested,
        settled: o.settled,
        failed: o.failed,
        unfinished: o.unfinished,
        rejected: o.rejected,
        settledPerSecond: o.perSecond,
        latencyMs: { p50: o.latencyMs.p50, p95: o.latencyMs.p95, p99: o.latencyMs.p99, max: o.latencyMs.max },
        workerCores,
      });
    }
    const peakRss = { api: apiRss.stop(), worker: workerRss.stop() };
    writeResultFile(CURVE_SVG, curveSvg(steps, settings));
    return { benchmark: 'settle-curve', startedAt, machine: machineInfo(), versions: await versions(), settings, steps, peakRss, svg: CURVE_SVG };
  } finally {
    await stack.stop();
  }
}

export function curveSvg(steps: CurveStep[], settings: CurveResults['settings']): string {
  const seconds = (ms: number) => Number((ms / 1000).toFixed(2));
  const points = (f: (s: CurveStep) => number) => steps.map((s) => [s.offeredPerSecond, f(s)] as const);
  const chain = settings.blockTimeSeconds === null ? 'automine' : `${settings.blockTimeSeconds} s blocks`;
  const maxRate = Math.max(...steps.map((s) => s.offeredPerSecond));
  return svgDocument(
    [
      {
        title: 'Settlement latency (request → settled) against offered load',
        xLabel: 'offered settlements/s',
        yLabel: 'latency, s',
        series: [
          { name: 'p50', color: '#1f77b4', points: points((s) => seconds(s.latencyMs.p50)) },
          { name: 'p95', color: '#ff7f0e', points: points((s) => seconds(s.latencyMs.p95)) },
          { name: 'p99', color: '#d62728', points: points((s) => seconds(s.latencyMs.p99)) },
        ],
      },
      {
        title: 'Settlements per second achieved',
        xLabel: 'offered settlements/s',
        yLabel: 'settled/s',
        series: [
          { name: 'settled/s', color: '#2ca02c', points: points((s) => s.settledPerSecond) },
          { name: 'offered', color: '#999', points: [[0, 0], [maxRate, maxRate]], dashed: true },
        ],
      },
    ],
    `anvil ${chain}, ${settings.relayers} relayer keys, 1 worker, ${settings.stepSeconds} s per rate (autocannon overallRate), Form B settle`,
  );
}

export function printCurve(r: CurveResults): void {
  const rows: Array<Array<string | number>> = [['offered/s', 'sent/s', 'settled/s', 'p50 ms', 'p95 ms', 'p99 ms', 'settled', 'failed', 'unfinished', 'rejected', 'worker cores']];
  for (const s of r.steps) rows.push([s.offeredPerSecond, s.sentPerSecond, s.settledPerSecond, s.latencyMs.p50, s.latencyMs.p95, s.latencyMs.p99, s.settled, s.failed, s.unfinished, s.rejected, s.workerCores]);
  process.stdout.write(`\nsettlement latency against offered load (${r.settings.blockTimeSeconds === null ? 'automine' : `${r.settings.blockTimeSeconds} s blocks`})\n${table(rows)}\n`);
  process.stdout.write(`peak RSS: API ${r.peakRss.api.totalMiB} MiB, worker ${r.peakRss.worker.totalMiB} MiB\n`);
}

if (require.main === module) runBenchmarkMain('settle-curve', runSettleCurve, printCurve, [path.join(RESULTS_DIR, CURVE_SVG)]);
