// `npm run bench:capacity`: what bounds settlement capacity on real block times (issue 27). For each chain
// cadence (anvil with 2 s blocks as Base, 0.25 s as a Flashblocks-like cadence, and automine) and each worker
// count, one fresh stack on the atomic path (the treasury delegates to the settlement executor, 3 relayer
// keys) settles BENCH_CAPACITY_SETTLEMENTS payments offered at once (Form B, verified before, not timed).
// Reported: settled/s from the first settle request to the last `settled`, request → settled p50/p99, the
// blocks the settle transactions spanned from the first mined one, and the CPU each process used.
import { machineInfo, versions, type MachineInfo } from './machine';
import { PaymentFactory } from './payments';
import { startCpuMeter, waitForQuietMachine } from './proc';
import { envNumber, log, runBenchmarkMain, table } from './results';
import { acceptedIds, offerSettles, settleOutcome, verifyPayments, waitForFinal, type SettleRequest } from './settle-load';
import { startSettleStack } from './settle-stack';
import type { Client } from 'pg';

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
}

export interface CapacityResults {
  benchmark: 'capacity';
  startedAt: string;
  machine: MachineInfo;
  versions: Record<string, string>;
  settings: { settlements: number; relayers: number; apiProcesses: number; settlementConcurrency: string; warmupSettlements: number };
  scenarios: CapacityScenario[];
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
  const list = (process.env.BENCH_CAPACITY_WORKERS ?? '1,2').split(',').map(Number);
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

async function runScenario(blockTimeSeconds: number | null, workers: number, settings: CapacityResults['settings']): Promise<CapacityScenario> {
  const total = settings.warmupSettlements + settings.settlements;
  const stack = await startSettleStack({
    blockTime: blockTimeSeconds ?? undefined,
    relayers: settings.relayers,
    settlements: total,
    apiProcesses: settings.apiProcesses,
    workerProcesses: workers,
    path: 'atomic',
  });
  try {
    const { devnet, db, api } = stack;
    log(`${blockTimeSeconds === null ? 'automine' : `${blockTimeSeconds} s blocks`}, ${workers} worker(s): verifying ${total} payments (not timed)`);
    const ids = await verifyPayments(api.url, new PaymentFactory(devnet), total);
    const requests: SettleRequest[] = ids.map((verificationId) => ({ verificationId, requestedAt: 0 }));
    const warmup = requests.slice(0, settings.warmupSettlements);
    await offerSettles(api.url, devnet, warmup, { connections: 8 });
    await waitForFinal(db, acceptedIds(warmup), 60_000);

    const offered = requests.slice(settings.warmupSettlements);
    log(`offering ${offered.length} settlements at once`);
    const cpu = startCpuMeter({ trees: stack.cpuTrees });
    await offerSettles(api.url, devnet, offered, { connections: 64 });
    await waitForFinal(db, acceptedIds(offered), envNumber('BENCH_CAPACITY_TIMEOUT_SECONDS', 180) * 1000);
    const cores = cpu.stop().cores;
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
    };
  } finally {
    await stack.stop();
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
  const scenarios: CapacityScenario[] = [];
  for (const blockTime of chains()) for (const workers of workerCounts()) scenarios.push(await runScenario(blockTime, workers, settings));
  return { benchmark: 'capacity', startedAt, machine: machineInfo(), versions: await versions(), settings, scenarios };
}

export function printCapacity(r: CapacityResults): void {
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
