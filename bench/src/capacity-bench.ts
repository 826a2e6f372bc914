// `npm run bench:capacity`: settlement capacity, in parts (BENCH_CAPACITY_PARTS, default all, in this order):
// - x402, merchants, workers, flood (x402-capacity.ts, issue 41): the standard x402 API side by side with the
//   reference facilitator, 500 payments of the real @x402/evm client in flight on 2 s blocks, CPU per
//   settlement of each process; the payments over 100 merchants; two worker processes; a flood of strangers'
//   payments that fail the pre-flight at ten times our capacity beside honest x402 traffic;
// - baseline: Form B with automine, BENCH_CAPACITY_SETTLEMENTS offered at once, against an older commit built in
//   a temporary git worktree (code-tree.ts; BENCH_BASELINE_COMMIT, default b3237c9) and against this one,
//   one after the other;
// - chains (issue 27): for each chain cadence (anvil with 2 s blocks as Base, 0.25 s as a Flashblocks-like
//   cadence, and automine) and each worker count, one fresh stack on the atomic path (the treasury delegates
//   to the settlement executor, 3 relayer keys) settles BENCH_CAPACITY_SETTLEMENTS payments offered at once
//   (Form B, verified before, not timed). Reported: settled/s from the first settle request to the last
//   `settled`, request → settled p50/p99, the blocks the settle transactions spanned from the first mined
//   one, and the CPU each process used.
import { currentTree, prepareBaselineTree, type CodeTree } from './code-tree';
import { machineInfo, versions, type MachineInfo } from './machine';
import { PaymentFactory } from './payments';
import { startCpuMeter, waitForQuietMachine, watchPostgresBackends } from './proc';
import { envNumber, log, runBenchmarkMain, table } from './results';
import { acceptedIds, offerSettles, settleOutcome, verifyPayments, waitForFinal, type SettleRequest } from './settle-load';
import { startSettleStack } from './settle-stack';
import { adminDatabaseUrl } from './stack';
import { round } from './stats';
import { runX402Capacity, type X402Part, type X402Results } from './x402-capacity';
import type { Client } from 'pg';

export type CapacityPart = X402Part | 'baseline' | 'chains';
const PARTS: CapacityPart[] = ['x402', 'merchants', 'workers', 'flood', 'baseline', 'chains'];

/** Form B with automine: this build against an older commit's, measured one after the other in the same run. */
export interface BaselineComparison {
  /** the older commit (short hash) */
  commit: string;
  /** the older build's checkout and build time (0: a kept build reused) */
  buildSeconds: number;
  settlements: number;
  baseline: CapacityScenario;
  current: CapacityScenario;
  /** current ÷ baseline settled/s */
  ratio: number;
  /** issue 41: at least this many times the baseline's rate */
  target: number;
}

export interface CapacityScenario {
  /** seconds between blocks; null: automine */
  blockTimeSeconds: number | null;
  workers: number;
  settlements: number;
  settled: number;
  failed: number;
  unfinished: number;
  rejected: number;
  settledPerSecond: number;
  latencyMs: { p50: number; p99: number };
  /** blocks from the first mined settle transaction's to the last's, both counted */
  blocks: number;
  settleTransactions: number;
  /** failed settlements by error code */
  failureCodes: Record<string, number>;
  /** cores used over the offer and drain, per process tree (api, worker, worker2, anvil, bench) */
  cores: Record<string, number>;
  /** the build measured, when not this checkout's (the baseline's commit) */
  commit?: string;
}

export interface CapacityResults {
  benchmark: 'capacity';
  startedAt: string;
  machine: MachineInfo;
  versions: Record<string, string>;
  settings: { settlements: number; relayers: number; apiProcesses: number; settlementConcurrency: string; warmupSettlements: number };
  /** the parts run (BENCH_CAPACITY_PARTS); absent in results from before issue 41 (chains only) */
  parts?: CapacityPart[];
  /** the chains part (issue 27) */
  scenarios: CapacityScenario[];
  /** the x402 parts (issue 41) */
  x402?: X402Results;
  /** Form B with automine against an older commit (issue 41) */
  baseline?: BaselineComparison;
}

function chains(): Array<number | null> {
  const raw = process.env.BENCH_CAPACITY_CHAINS ?? '2,0.25,automine';
  return raw.split(',').map((c) => {
    if (c === 'automine') return null;
    const seconds = Number(c);
    if (!(seconds > 0)) throw new Error(`BENCH_CAPACITY_CHAINS takes seconds or "automine", got ${JSON.stringify(c)}`);
    return seconds;
  });
}

function workerCounts(): number[] {
  const list = (process.env.BENCH_CAPACITY_WORKERS ?? '1').split(',').map(Number);
  if (list.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('BENCH_CAPACITY_WORKERS takes positive integers');
  return list;
}

/** The settle transactions (executor batches) that carried these settlements: how many, and the blocks they span. */
async function batchBlocks(db: Client, ids: string[]): Promise<{ transactions: number; blocks: number }> {
  const { rows } = await db.query<{ n: string; first: string | null; last: string | null }>(
    `SELECT count(DISTINCT t.id) AS n, min(t.block_number) AS first, max(t.block_number) AS last
       FROM settlement_batch_items i JOIN chain_transactions t ON t.settlement_id = i.batch_id AND t.purpose = 'settle'
      WHERE i.settlement_id = ANY($1)`,
    [ids],
  );
  const { n, first, last } = rows[0];
  return { transactions: Number(n), blocks: first === null || last === null ? 0 : Number(last) - Number(first) + 1 };
}

async function runScenario(blockTimeSeconds: number | null, workers: number, settings: CapacityResults['settings'], tree?: CodeTree): Promise<CapacityScenario> {
  const total = settings.warmupSettlements + settings.settlements;
  const stack = await startSettleStack({
    tree,
    blockTime: blockTimeSeconds ?? undefined,
    relayers: settings.relayers,
    settlements: total,
    apiProcesses: settings.apiProcesses,
    workerProcesses: workers,
    path: 'atomic',
  });
  try {
    const { devnet, db, api } = stack;
    log(`${tree ? `${tree.label}: ` : ''}${blockTimeSeconds === null ? 'automine' : `${blockTimeSeconds} s blocks`}, ${workers} worker(s): verifying ${total} payments (not timed)`);
    const ids = await verifyPayments(api.url, new PaymentFactory(devnet), total);
    const requests: SettleRequest[] = ids.map((verificationId) => ({ verificationId, requestedAt: 0 }));
    const warmup = requests.slice(0, settings.warmupSettlements);
    await offerSettles(api.url, devnet, warmup, { connections: 8 });
    await waitForFinal(db, acceptedIds(warmup), 60_000);

    const offered = requests.slice(settings.warmupSettlements);
    log(`offering ${offered.length} settlements at once`);
    const backends = await watchPostgresBackends(adminDatabaseUrl(), [stack.databaseName]);
    const cpu = startCpuMeter({ trees: stack.cpuTrees, foreign: backends.foreign });
    await offerSettles(api.url, devnet, offered, { connections: 64 });
    await waitForFinal(db, acceptedIds(offered), envNumber('BENCH_CAPACITY_TIMEOUT_SECONDS', 180) * 1000);
    const cores = cpu.stop().cores;
    await backends.stop();
    const outcome = await settleOutcome(db, offered);
    const batches = await batchBlocks(db, acceptedIds(offered));
    return {
      blockTimeSeconds,
      workers,
      settlements: offered.length,
      settled: outcome.settled,
      failed: outcome.failed,
      unfinished: outcome.unfinished,
      rejected: outcome.rejected,
      settledPerSecond: outcome.perSecond,
      latencyMs: { p50: outcome.latencyMs.p50, p99: outcome.latencyMs.p99 },
      blocks: batches.blocks,
      settleTransactions: batches.transactions,
      failureCodes: outcome.failureCodes,
      cores: Object.fromEntries(Object.entries(cores).map(([k, v]) => [k, Math.round(v * 100) / 100])),
      ...(tree && tree.label !== 'current' ? { commit: tree.commit } : {}),
    };
  } finally {
    await stack.stop();
  }
}

function partsFromEnv(): CapacityPart[] {
  const raw = process.env.BENCH_CAPACITY_PARTS;
  if (!raw) return PARTS;
  const asked = raw.split(',').map((p) => p.trim());
  const unknown = asked.filter((p) => !PARTS.includes(p as CapacityPart));
  if (unknown.length) throw new Error(`BENCH_CAPACITY_PARTS takes ${PARTS.join(',')}; unknown: ${unknown.join(',')}`);
  return PARTS.filter((p) => asked.includes(p));
}

/** Form B with automine on the older build, then on this one, the same scenario and sizes. */
async function runBaseline(settings: CapacityResults['settings']): Promise<BaselineComparison> {
  const commit = process.env.BENCH_BASELINE_COMMIT ?? 'b3237c9';
  const prepared = await prepareBaselineTree(commit);
  try {
    const sized = { ...settings, settlements: envNumber('BENCH_BASELINE_SETTLEMENTS', settings.settlements) };
    const baseline = await runScenario(null, 1, sized, prepared.tree);
    const current = await runScenario(null, 1, sized, currentTree());
    return {
      commit: prepared.tree.commit,
      buildSeconds: prepared.buildSeconds,
      settlements: sized.settlements,
      baseline,
      current,
      ratio: baseline.settledPerSecond > 0 ? round(current.settledPerSecond / baseline.settledPerSecond, 2) : NaN,
      target: 2,
    };
  } finally {
    await prepared.remove();
  }
}

export async function runCapacity(): Promise<CapacityResults> {
  const settings: CapacityResults['settings'] = {
    settlements: envNumber('BENCH_CAPACITY_SETTLEMENTS', 1000),
    relayers: 3,
    apiProcesses: envNumber('BENCH_API_PROCESSES', 2),
    settlementConcurrency: '200 (default)',
    warmupSettlements: envNumber('BENCH_CAPACITY_WARMUP', 40),
  };
  const busy = await waitForQuietMachine();
  if (busy > 0.15) log(`machine still ${Math.round(busy * 100)}% busy with other work; measuring anyway`);
  const startedAt = new Date().toISOString();
  const parts = partsFromEnv();
  const x402Parts = new Set(parts.filter((p): p is X402Part => p !== 'baseline' && p !== 'chains'));
  const x402 = x402Parts.size > 0 ? await runX402Capacity(x402Parts) : undefined;
  const baseline = parts.includes('baseline') ? await runBaseline(settings) : undefined;
  const scenarios: CapacityScenario[] = [];
  if (parts.includes('chains')) for (const blockTime of chains()) for (const workers of workerCounts()) scenarios.push(await runScenario(blockTime, workers, settings));
  return { benchmark: 'capacity', startedAt, machine: machineInfo(), versions: await versions(), settings, parts, scenarios, ...(x402 ? { x402 } : {}), ...(baseline ? { baseline } : {}) };
}

function printIssue41(r: CapacityResults): void {
  const x = r.x402;
  if (x) {
    const rows: Array<Array<string | number>> = [['run', 'settled/s', 'settled', 'refused', 'p50 ms', 'p99 ms', 'own CPU ms/settlement', 'node ms/settlement', 'by process']];
    for (const [name, run] of [['ours', x.ours], ['reference', x.reference], [`ours, ${x.settings.merchants} merchants`, x.hundredMerchants], ['ours, 2 workers', x.twoWorkers]] as const) {
      if (!run) continue;
      rows.push([name, run.perSecond, run.settled, `${run.refused} ${run.refused ? JSON.stringify(run.refusals) : ''}`, run.latencyMs.p50, run.latencyMs.p99, run.ownMsPerSettlement, run.nodeMsPerSettlement, JSON.stringify(run.cpuMsPerSettlement)]);
    }
    if (rows.length > 1) process.stdout.write(`\nx402 settle, ${x.settings.payments} payments, ${x.settings.inFlight} in flight, ${x.settings.blockTimeSeconds} s blocks${x.ratio !== undefined ? `; ours ÷ reference ${x.ratio}×` : ''}\n${table(rows)}\n`);
    const f = x.flood;
    if (f) {
      process.stdout.write(
        `flood ${f.floodRatePerSecond}/s (${f.factor}× ${f.capacityPerSecond}/s) beside honest ${f.honestRatePerSecond}/s: ` +
          `alone ${JSON.stringify({ settled: f.unflooded.settled, stopped: f.unflooded.stopped, chargedAndRefused: f.unflooded.chargedAndRefused, p50: f.unflooded.latencyMs.p50 })}, ` +
          `flooded ${JSON.stringify({ settled: f.flooded.settled, stopped: f.flooded.stopped, chargedAndRefused: f.flooded.chargedAndRefused, p50: f.flooded.latencyMs.p50 })}, p50 ×${f.p50Ratio}; strangers ${JSON.stringify(f.flood.answers)}\n`,
      );
    }
  }
  const b = r.baseline;
  if (b) process.stdout.write(`Form B automine: this build ${b.current.settledPerSecond}/s, commit ${b.commit} ${b.baseline.settledPerSecond}/s: ${b.ratio}× (target ${b.target}×)\n`);
}

export function printCapacity(r: CapacityResults): void {
  printIssue41(r);
  if (r.scenarios.length === 0) return;
  const rows: Array<Array<string | number>> = [['chain', 'workers', 'settled/s', 'p50 ms', 'p99 ms', 'blocks', 'settle txs', 'settled', 'failed', 'unfinished', 'rejected', 'cores']];
  for (const s of r.scenarios) {
    const cores = Object.entries(s.cores)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    rows.push([s.blockTimeSeconds === null ? 'automine' : `${s.blockTimeSeconds} s`, s.workers, s.settledPerSecond, s.latencyMs.p50, s.latencyMs.p99, s.blocks, s.settleTransactions, s.settled, s.failed, s.unfinished, s.rejected, cores]);
  }
  process.stdout.write(`\n${r.settings.settlements} settlements offered at once, atomic path\n${table(rows)}\n`);
  for (const s of r.scenarios.filter((c) => c.failed > 0)) {
    process.stdout.write(`failed (${s.blockTimeSeconds === null ? 'automine' : `${s.blockTimeSeconds} s`}, ${s.workers} worker(s)): ${JSON.stringify(s.failureCodes)}\n`);
  }
}

if (require.main === module) runBenchmarkMain('capacity', runCapacity, printCapacity);
