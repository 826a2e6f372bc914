// The BENCHMARKS.md sections of bench:capacity's issue-41 parts: capacity through the standard x402 API
// against the reference facilitator (with CPU per settlement per process), one merchant against 100, one
// worker against two, the flood, and Form B with automine against an older commit. Each target is printed
// met or missed with the figures it is computed from.
import type { BaselineComparison, CapacityResults, CapacityScenario } from './capacity-bench';
import { header, interference, n, row } from './report-load';
import { OUR_PROCESSES, X402_TARGETS, type FloodResult, type HonestOutcome, type X402Results, type X402Run } from './x402-capacity';

const verdict = (met: boolean | undefined) => (met === undefined ? 'not measured' : met ? '**met**' : '**missed**');
const reasons = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${v}× ${k}`)
    .join(', ') || 'none';
/** a run whose every payment was answered success: only then does its rate count towards a target */
const complete = (r: X402Run) => r.refused === 0 && r.settled === r.payments;
const processCpu = (r: X402Run) =>
  Object.entries(r.cpuMsPerSettlement)
    .filter(([g]) => g !== 'other')
    .map(([g, ms]) => `${g} ${n(ms, 1)}`)
    .join(', ');

function runLabel(r: X402Run): string {
  if (r.facilitator === 'reference') return '@x402/evm exact reference (`POST /settle`, no fee)';
  return `ours, atomic (\`POST /x402/settle\`, fee): ${r.merchants} merchant${r.merchants === 1 ? '' : 's'}, ${r.workers} worker${r.workers === 1 ? '' : 's'}`;
}

function runRow(r: X402Run): string {
  return row([
    runLabel(r),
    `**${n(r.perSecond, 1)}**`,
    `${r.settled} of ${r.payments}`,
    r.refused ? reasons(r.refusals) : 'none',
    r.retried,
    n(r.latencyMs.p50),
    n(r.latencyMs.p99),
    n(r.ownMsPerSettlement, 1),
    n(r.nodeMsPerSettlement, 1),
    processCpu(r),
  ]);
}

/** Issue 41's targets on the x402 path, undefined where a part did not run. */
export function x402Targets(x: X402Results) {
  const { ours, reference, hundredMerchants, twoWorkers, flood } = x;
  // a run that settled nothing has no figure per settlement (null in the JSON)
  const nodeRatio =
    ours && reference && Number.isFinite(ours.nodeMsPerSettlement) && Number.isFinite(reference.nodeMsPerSettlement) && reference.nodeMsPerSettlement > 0
      ? ours.nodeMsPerSettlement / reference.nodeMsPerSettlement
      : undefined;
  return {
    ratio: ours && reference && x.ratio !== undefined ? complete(ours) && x.ratio >= X402_TARGETS.ratioToReference : undefined,
    ownCpu: ours ? complete(ours) && ours.ownMsPerSettlement <= X402_TARGETS.oursCpuMsPerSettlement : undefined,
    nodeRatio,
    nodeCpu: ours && reference ? nodeRatio !== undefined && complete(ours) && nodeRatio <= X402_TARGETS.nodeCpuRatioToReference : undefined,
    merchants: ours && hundredMerchants ? complete(ours) && complete(hundredMerchants) && ours.perSecond >= X402_TARGETS.oneMerchantToHundred * hundredMerchants.perSecond : undefined,
    workers: ours && twoWorkers ? complete(ours) && complete(twoWorkers) && twoWorkers.perSecond >= X402_TARGETS.twoWorkersToOne * ours.perSecond : undefined,
    floodStopped: flood ? flood.flooded.stopped <= X402_TARGETS.floodHonestStopped : undefined,
    floodCharged: flood ? flood.flooded.chargedAndRefused + flood.unflooded.chargedAndRefused <= X402_TARGETS.floodChargedAndRefused : undefined,
    floodP50: flood ? Number.isFinite(flood.p50Ratio) && flood.p50Ratio <= X402_TARGETS.floodP50Ratio : undefined,
  };
}

function x402Lines(x: X402Results): string[] {
  const s = x.settings;
  const t = x402Targets(x);
  const runs = [x.ours, x.reference, x.hundredMerchants, x.twoWorkers].filter((run): run is X402Run => run !== undefined);
  if (runs.length === 0) return x.flood ? floodLines(x, x.flood) : [];
  const lines = [
    '### Through the standard x402 API, beside the reference facilitator',
    '',
    `One anvil with ${s.blockTimeSeconds} s blocks. Each payment is made by the real \`@x402/evm\` exact client (EIP-3009, x402Client's \`createPaymentPayload\`, as \`@x402/fetch\` pays; $${Number(s.priceUnits) / 1e6} each) and settled as a merchant's x402 middleware settles it: ` +
      '`POST {facilitator}/settle` with `{ x402Version, paymentPayload, paymentRequirements }`, and once more with the same payload when the answer is `settlement_pending` with a transaction (as `@x402/core` does). ' +
      `${n(s.payments)} payments offered at once, ${n(s.inFlight)} in flight, after ${s.warmup} settled to warm each facilitator up (not counted). ` +
      `**Ours**: a fresh database, the compiled API (API_PROCESSES=${s.apiProcesses}) and worker(s), the atomic path set up as README says (the treasury delegates to the settlement executor; ${s.relayers} relayer keys; the worker holds relayer keys only), our fee of $${Number(s.feeUnits) / 1e6} charged to the merchant. ` +
      `**The reference**: @x402/core's \`x402Facilitator\` with @x402/evm's exact scheme on a viem wallet client (its nonce manager; receipts polled every ${s.referencePollingIntervalMs} ms), a key of its own, no fee, no database. Run one after the other on the same chain. ` +
      'settled/s: answered success ÷ the time from the first request to the last success. CPU per settlement: each process group\'s CPU over the run (`/proc/<pid>/stat` utime + stime, sampled every 0.5 s so that processes ending meanwhile keep theirs) ÷ the payments settled; `postgres` is the backends of the run\'s database and the server\'s own processes (other databases\' backends are charged to `other`); Redis is one shared server; `bench` is the load generator.',
    '',
    ...header(['facilitator', 'settled/s', 'settled', 'refused', 'pending retried', 'p50 ms', 'p99 ms', 'CPU ms / settlement, own', 'chain node ms / settlement', 'CPU ms / settlement by process']),
    ...runs.map(runRow),
    '',
  ];
  if (x.ours && x.reference) {
    const o = x.ours;
    const ref = x.reference;
    lines.push(
      `- (a) Capacity: ours ${n(o.perSecond, 1)}/s ÷ the reference's ${n(ref.perSecond, 1)}/s = **${n(x.ratio, 2)}×** — target ≥ ${X402_TARGETS.ratioToReference}× (every payment settled): ${verdict(t.ratio)}.`,
      `- (b) Our processes' CPU per settlement: **${n(o.ownMsPerSettlement, 1)} ms** (${OUR_PROCESSES.filter((p) => o.cpuMsPerSettlement[p] !== undefined).map((p) => `${p} ${n(o.cpuMsPerSettlement[p], 1)}`).join(', ')}) against the reference process's ${n(ref.ownMsPerSettlement, 1)} ms — target ≤ ${X402_TARGETS.oursCpuMsPerSettlement} ms: ${verdict(t.ownCpu)}.`,
      `- (b) The chain node's CPU per settlement: ours ${n(o.nodeMsPerSettlement, 1)} ms, the reference's ${n(ref.nodeMsPerSettlement, 1)} ms: **${n(t.nodeRatio, 2)}×** — target ≤ ${X402_TARGETS.nodeCpuRatioToReference}×: ${verdict(t.nodeCpu)}.`,
    );
  } else if (x.ours) {
    lines.push(`- (b) Our processes' CPU per settlement: **${n(x.ours.ownMsPerSettlement, 1)} ms** — target ≤ ${X402_TARGETS.oursCpuMsPerSettlement} ms: ${verdict(t.ownCpu)} (the reference was not run).`);
  }
  if (x.ours && x.hundredMerchants) {
    lines.push(
      `- (c) One merchant ${n(x.ours.perSecond, 1)}/s against ${x.hundredMerchants.merchants} merchants ${n(x.hundredMerchants.perSecond, 1)}/s: **${n(x.ours.perSecond / x.hundredMerchants.perSecond, 2)}×** — target ≥ ${X402_TARGETS.oneMerchantToHundred}×: ${verdict(t.merchants)}.`,
    );
  }
  if (x.ours && x.twoWorkers) {
    lines.push(
      `- (d) Two workers ${n(x.twoWorkers.perSecond, 1)}/s against one ${n(x.ours.perSecond, 1)}/s: **${n(x.twoWorkers.perSecond / x.ours.perSecond, 2)}×** — target ≥ ${X402_TARGETS.twoWorkersToOne}×: ${verdict(t.workers)}.`,
    );
  }
  if ((x.hundredMerchants || x.twoWorkers) && x.ours) lines.push('- The one-merchant, one-worker figure of (c) and (d) is the first row, (a)\'s, on the same chain in the same run.');
  for (const run of runs) {
    if (run.settlementStates && Object.keys(run.settlementStates).some((state) => state !== 'settled')) {
      lines.push(`- ${runLabel(run)}: settlements ended ${reasons(run.settlementStates)}.`);
    }
    if (run.problems.errors + run.problems.warnings > 0) {
      lines.push(`- ${runLabel(run)} logged ${run.problems.errors} error and ${run.problems.warnings} warning lines: ${run.problems.messages.slice(0, 5).map((m) => `${m.level} ×${m.count} ${m.message}`).join('; ')}.`);
    }
  }
  lines.push(...interference(Math.max(0, ...runs.map((run) => run.cpu.cores.other ?? 0))), '');
  if (x.flood) lines.push(...floodLines(x, x.flood));
  return lines;
}

function honestRow(name: string, h: HonestOutcome, rate: number): string {
  return row([name, h.offered, n(rate, 1), h.settled, h.stopped, h.chargedAndRefused, n(h.latencyMs.p50), n(h.latencyMs.p95), reasons(h.refusals)]);
}

function floodLines(x: X402Results, f: FloodResult): string[] {
  const t = x402Targets(x);
  return [
    '### A flood of payments that fail the pre-flight, beside honest x402 traffic',
    '',
    `Ours: a fresh facilitator on the atomic path, set up as for the x402 runs, with one worker. Honest traffic: ${f.unflooded.offered} payments of the devnet payer (funded) to the devnet merchant, made by @x402/evm's client and settled through \`POST /x402/settle\` at ${n(f.honestRatePerSecond, 1)}/s (an open loop), from 127.0.0.2; first alone, then again beside the flood. ` +
      `The flood, from 127.0.0.3: strangers offering ${n(f.floodRatePerSecond, 1)} payments/s, ${f.factor}× our capacity (${n(f.capacityPerSecond, 1)}/s, ${f.capacitySource === 'measured' ? '(a)\'s figure of the same run' : 'BENCH_FLOOD_CAPACITY'}), for as long as the honest traffic lasts: each signed by a throwaway key of its own that holds nothing, with a fresh nonce and its own address as payTo, in the shape @x402/evm's client makes — good signatures from payers that hold nothing, refused wherever the balance is first checked (verification, or the worker's pre-flight). ` +
      '**stopped**: an honest payment refused and not executed on chain; **charged and refused**: refused, and yet its nonce is used on chain (read from USDC\'s `authorizationState` once every settlement of it is final). Latency: request → final answer (with the retry of a pending answer).',
    '',
    ...header(['traffic', 'payments', 'offered/s', 'settled', 'stopped', 'charged and refused', 'p50 ms', 'p95 ms', 'refusals']),
    honestRow('honest, alone', f.unflooded, f.honestRatePerSecond),
    honestRow('honest, beside the flood', f.flooded, f.honestRatePerSecond),
    row(['strangers (the flood)', f.flood.offered, n(f.floodRatePerSecond, 1), f.flood.succeeded, '–', '–', n(f.flood.latencyMs.p50), n(f.flood.latencyMs.p95), reasons(f.flood.answers)]),
    '',
    `- (e) Honest settlements stopped during the flood: **${f.flooded.stopped}** — target ${X402_TARGETS.floodHonestStopped}: ${verdict(t.floodStopped)}.`,
    `- (e) Honest buyers charged and refused: **${f.flooded.chargedAndRefused}** beside the flood (${f.unflooded.chargedAndRefused} alone) — target ${X402_TARGETS.floodChargedAndRefused}: ${verdict(t.floodCharged)}.`,
    `- (e) Honest p50 beside the flood ${n(f.flooded.latencyMs.p50)} ms ÷ alone ${n(f.unflooded.latencyMs.p50)} ms = **${n(f.p50Ratio, 2)}×** — target ≤ ${X402_TARGETS.floodP50Ratio}×: ${verdict(t.floodP50)}.`,
    `- The strangers' requests were answered at ${n(f.flood.answeredPerSecond, 1)}/s${f.flood.ownMsPerStranger === undefined ? '' : `; our processes spent ${n(f.flood.ownMsPerStranger, 2)} ms of CPU per stranger's payment over the flooded run (the honest traffic's share included: at most what refusing one costs)`}; CPU during the flooded run, in cores: ${Object.entries(f.cpu.cores).map(([k, v]) => `${k} ${v}`).join(', ')}; machine ${Math.round(f.cpu.machineBusy * 100)}% busy.`,
    ...(f.problems.errors + f.problems.warnings > 0 ? [`- Ours logged ${f.problems.errors} error and ${f.problems.warnings} warning lines: ${f.problems.messages.slice(0, 5).map((m) => `${m.level} ×${m.count} ${m.message}`).join('; ')}.`] : []),
    '',
  ];
}

function scenarioRow(name: string, c: CapacityScenario): string {
  return row([name, `**${n(c.settledPerSecond, 1)}**`, n(c.latencyMs.p50), n(c.latencyMs.p99), c.settled, c.failed, c.unfinished, c.rejected, Object.entries(c.cores).map(([k, v]) => `${k} ${v}`).join(', ')]);
}

/** Form B with automine, this build against the older one. */
export function baselineTarget(b: BaselineComparison): boolean {
  const done = (c: CapacityScenario) => c.failed === 0 && c.unfinished === 0 && c.rejected === 0;
  return done(b.current) && b.ratio >= b.target;
}

function baselineLines(r: CapacityResults, b: BaselineComparison): string[] {
  return [
    `### Form B with automine against commit ${b.commit}`,
    '',
    `The same scenario on two builds, one after the other in this run: commit ${b.commit} checked out in a temporary git worktree and built there (${b.buildSeconds ? `${b.buildSeconds} s` : 'a kept build reused'}), then this one (${r.versions?.commit ?? 'this checkout'}). Each: a fresh anvil with automine and that build's own devnet (USDC and its settlement executor, the treasury delegating to it, ${r.settings.relayers} relayer keys), a fresh database migrated with that build's migrations, its compiled API (API_PROCESSES=${r.settings.apiProcesses}) and one worker; ` +
      `${n(b.settlements)} payments verified first (not timed), ${r.settings.warmupSettlements} settled to warm up, the rest offered at once as Form B \`POST /v1/settle\` by 64 connections; settled/s from the first settle request to the last \`settled\`. The benchmark's own code is this checkout's for both.`,
    '',
    ...header(['build', 'settled/s', 'p50 ms', 'p99 ms', 'settled', 'failed', 'unfinished', 'rejected', 'CPU cores']),
    scenarioRow(`commit ${b.commit}`, b.baseline),
    scenarioRow(`this build (${r.versions?.commit ?? 'current'})`, b.current),
    '',
    `- This build ${n(b.current.settledPerSecond, 1)}/s ÷ commit ${b.commit}'s ${n(b.baseline.settledPerSecond, 1)}/s = **${n(b.ratio, 2)}×** — target ≥ ${b.target}× (every settlement settled): ${verdict(baselineTarget(b))}.`,
    ...interference(Math.max(b.current.cores.other ?? 0, b.baseline.cores.other ?? 0)),
    '',
  ];
}

/** The issue-41 parts of the capacity section; empty for results from before them. */
export function x402CapacityLines(r: CapacityResults): string[] {
  return [...(r.x402 ? x402Lines(r.x402) : []), ...(r.baseline ? baselineLines(r, r.baseline) : [])];
}
