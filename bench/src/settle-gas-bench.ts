// `npm run bench:gas`: gas per settlement on each settlement path, on anvil with automine, from the
// receipts of the transactions the worker recorded (chain_transactions.mined_hash):
// - sequential (SETTLEMENT_MODE=sequential): the fee `transferFrom` and the payer's
//   `transferWithAuthorization` of each settlement, two transactions;
// - atomic, one at a time: the executor's `settle` with one item — each settle request is sent once the
//   previous settlement is final, so no two share a transaction;
// - atomic, batched: a burst of settle requests with BATCH_WINDOW_MS=200, so that batches form; gas =
//   every `settle` transaction of those settlements ÷ settlements. Its settled/s (first request to last
//   `settled`) is the automine throughput of the batched path, like bench:settle's burst;
// - atomic with the default BATCH_WINDOW_MS=0, the same burst: throughput and batches as shipped;
// - each payment mechanism on each path (mechanism-gas.ts): `exact` by EIP-3009, `exact` through Permit2
//   and `upto` through Permit2, BENCH_GAS_MECHANISM_COUNT payments of each, one at a time through
//   /x402/verify and /x402/settle, by the sequential worker and by the atomic one (BATCH_WINDOW_MS=0).
// One anvil (the treasury delegating to the executor), one database and API; the worker is restarted with
// each path's settings. Payments are verified first (not timed); each worker start is warmed up with a
// few settlements (not counted).
import type { Client } from 'pg';
import { setUpDevnetExecutor, type Devnet } from '@facilitator/evm-devnet';
import { describeProblems, FEE_UNITS, startChain, startFacilitator, stopChainOnSignal, type Facilitator } from './facilitator-stack';
import type { LogProblems } from './app-logs';
import { machineInfo, versions, type MachineInfo } from './machine';
import { approvePermit2Once, mechanismGas, mechanismSpend, type MechanismGasResult } from './mechanism-gas';
import { PaymentFactory, PRICE_UNITS } from './payments';
import { startCpuMeter, waitForQuietMachine, type CpuUsage } from './proc';
import { envNumber, log, runBenchmarkMain, table } from './results';
import { acceptedIds, offeredPerSecond, offerSettles, settleOutcome, verifyPayments, waitForFinal, type SettleOutcome, type SettleRequest } from './settle-load';
import { epochMs, round } from './stats';

export const GAS_TARGETS = { batchedSavingMinPercent: 25, batchedMinPerSecond: 300 };

export interface GasScenarioResult {
  scenario: string;
  settlementMode: 'sequential' | 'atomic';
  batchWindowMs: number | null;
  load: string;
  /** settlements measured (warm-up excluded) */
  settlements: number;
  settled: number;
  failed: number;
  unfinished: number;
  /** settle requests not answered 200 */
  rejected: number;
  /** the states the unfinished settlements were left in when the wait ended */
  unfinishedStates?: Record<string, number>;
  /** mined transactions counted, by purpose ('fee', 'transfer' or 'settle') */
  transactions: Record<string, number>;
  /** mean gasUsed of one transaction, by purpose */
  meanGasPerTransaction: Record<string, number>;
  gasUsedTotal: number;
  /** gasUsedTotal (transactions of the settled settlements) ÷ settled */
  gasPerSettlement: number;
  /** transactions the database names whose receipt could not be read (should be 0) */
  missingReceipts: number;
  /** atomic: the settle transactions' batches */
  batches?: { count: number; meanSize: number; maxSize: number; sizes: Record<string, number>; itemsOutsideThisRun: number };
  /** a burst: settled/s from the first request to the last `settled`, and request → settled latency */
  throughput?: Pick<SettleOutcome, 'perSecond' | 'latencyMs' | 'medianStagesMs' | 'failureCodes'> & {
    /** the rate the settle requests were sent and answered at (first to last request) */
    offeredPerSecond: number;
  };
  cpu?: CpuUsage;
}

export interface GasResults {
  benchmark: 'settle-gas';
  startedAt: string;
  machine: MachineInfo;
  versions: Record<string, string>;
  settings: {
    relayers: number;
    apiProcesses: number;
    warmupPerWorker: number;
    sequentialCount: number;
    sequentialConcurrency: number;
    singleCount: number;
    batchedCount: number;
    batchedConcurrency: number;
    batchedWindowMs: number;
    workerLogLevel: string;
    /** payments of each mechanism on each path, one at a time (0: none) */
    mechanismCount?: number;
  };
  scenarios: GasScenarioResult[];
  /** gas per settlement of each payment mechanism on each path, one at a time, from the receipts */
  mechanisms?: MechanismGasResult[];
  /** how much less gas per settlement than sequential, % (positive = less) */
  savingsPercent: { atomicOneAtATime: number | null; atomicBatched: number | null; atomicDefaultWindowBurst: number | null };
  targets: {
    batchedSavingMinPercent: number;
    batchedSavingMet: boolean | null;
    batchedMinPerSecond: number;
    batchedThroughputMet: boolean | null;
  };
  /** warn and error lines of the API and workers during the run */
  problems: LogProblems;
}

/**
 * gasUsed of every mined transaction of these settlements that settled (their own, or their batches'), by
 * purpose: one left unfinished (its fee mined, its transfer not) would add gas without a settlement.
 */
async function gasOf(db: Client, devnet: Devnet, ids: string[]): Promise<Pick<GasScenarioResult, 'transactions' | 'meanGasPerTransaction' | 'gasUsedTotal' | 'missingReceipts' | 'batches'>> {
  const settled = await db.query<{ id: string }>(`SELECT id FROM settlements WHERE id = ANY($1) AND state = 'settled'`, [ids]);
  const settlementIds = settled.rows.map((r) => r.id);
  const batchRows = await db.query<{ batch_id: string; item_count: number; items_here: string }>(
    `SELECT b.id AS batch_id, b.item_count, count(i.settlement_id) AS items_here
       FROM settlement_batches b JOIN settlement_batch_items i ON i.batch_id = b.id AND i.settlement_id = ANY($1)
      GROUP BY b.id, b.item_count`,
    [settlementIds],
  );
  const owners = [...settlementIds, ...batchRows.rows.map((b) => b.batch_id)];
  const txs = await db.query<{ purpose: string; mined_hash: string | null; status: string }>(
    `SELECT purpose, mined_hash, status::text AS status FROM chain_transactions WHERE settlement_id = ANY($1)`,
    [owners],
  );
  const transactions: Record<string, number> = {};
  const gasByPurpose: Record<string, number> = {};
  let missingReceipts = 0;
  const mined = txs.rows.filter((t) => t.mined_hash);
  for (let i = 0; i < mined.length; i += 50) {
    const chunk = mined.slice(i, i + 50);
    const receipts = await Promise.all(chunk.map((t) => devnet.provider.getTransactionReceipt(t.mined_hash!)));
    chunk.forEach((t, j) => {
      const receipt = receipts[j];
      if (!receipt) {
        missingReceipts++;
        return;
      }
      transactions[t.purpose] = (transactions[t.purpose] ?? 0) + 1;
      gasByPurpose[t.purpose] = (gasByPurpose[t.purpose] ?? 0) + Number(receipt.gasUsed);
    });
  }
  const gasUsedTotal = Object.values(gasByPurpose).reduce((a, b) => a + b, 0);
  const meanGasPerTransaction = Object.fromEntries(Object.entries(gasByPurpose).map(([p, g]) => [p, round(g / transactions[p], 0)]));
  const result: Pick<GasScenarioResult, 'transactions' | 'meanGasPerTransaction' | 'gasUsedTotal' | 'missingReceipts' | 'batches'> = {
    transactions,
    meanGasPerTransaction,
    gasUsedTotal,
    missingReceipts,
  };
  if (batchRows.rows.length > 0) {
    const sizes: Record<string, number> = {};
    let items = 0;
    let outside = 0;
    for (const b of batchRows.rows) {
      sizes[b.item_count] = (sizes[b.item_count] ?? 0) + 1;
      items += b.item_count;
      outside += b.item_count - Number(b.items_here);
    }
    result.batches = {
      count: batchRows.rows.length,
      meanSize: round(items / batchRows.rows.length, 2),
      maxSize: Math.max(...batchRows.rows.map((b) => b.item_count)),
      sizes,
      itemsOutsideThisRun: outside,
    };
  }
  return result;
}

function counts(outcome: SettleOutcome): Pick<GasScenarioResult, 'settlements' | 'settled' | 'failed' | 'unfinished' | 'rejected'> {
  return { settlements: outcome.requested, settled: outcome.settled, failed: outcome.failed, unfinished: outcome.unfinished, rejected: outcome.rejected };
}

interface Phase {
  scenario: string;
  settlementMode: 'sequential' | 'atomic';
  batchWindowMs: number | null;
}

/** Not measured: a fresh worker's first settlements run cold code (V8, Prisma's query shapes). */
async function warmUp(f: Facilitator, devnet: Devnet, requests: SettleRequest[]): Promise<void> {
  await offerSettles(f.api.url, devnet, requests, { connections: 8 });
  await waitForFinal(f.db, acceptedIds(requests), 60_000);
}

async function burst(f: Facilitator, devnet: Devnet, phase: Phase, requests: SettleRequest[], concurrency: number, timeoutMs: number): Promise<GasScenarioResult> {
  const cpu = startCpuMeter({ trees: { api: f.api.child.pid!, worker: f.worker.child.pid!, anvil: devnet.pid, bench: process.pid } });
  await offerSettles(f.api.url, devnet, requests, { connections: concurrency });
  await waitForFinal(f.db, acceptedIds(requests), timeoutMs);
  const cpuUsage = cpu.stop();
  const outcome = await settleOutcome(f.db, requests);
  const ids = acceptedIds(requests);
  const gas = await gasOf(f.db, devnet, ids);
  const open = await f.db.query<{ state: string; count: string }>(
    `SELECT state::text AS state, count(*) AS count FROM settlements WHERE id = ANY($1) AND state NOT IN ('settled', 'failed') GROUP BY state`,
    [ids],
  );
  if (open.rows.length > 0) log(`${phase.scenario}: unfinished after ${timeoutMs / 1000} s: ${open.rows.map((r) => `${r.count} in ${r.state}`).join(', ')}`);
  return {
    ...phase,
    load: `burst (autocannon): ${requests.length} settle requests (Form B), ${concurrency} in flight`,
    ...counts(outcome),
    ...(open.rows.length > 0 ? { unfinishedStates: Object.fromEntries(open.rows.map((r) => [r.state, Number(r.count)])) } : {}),
    ...gas,
    gasPerSettlement: outcome.settled > 0 ? round(gas.gasUsedTotal / outcome.settled, 0) : NaN,
    throughput: { perSecond: outcome.perSecond, offeredPerSecond: offeredPerSecond(requests), latencyMs: outcome.latencyMs, medianStagesMs: outcome.medianStagesMs, failureCodes: outcome.failureCodes },
    cpu: cpuUsage,
  };
}

/** Each settle request sent once the previous settlement is final: every batch has one item. */
async function oneAtATime(f: Facilitator, devnet: Devnet, phase: Phase, requests: SettleRequest[]): Promise<GasScenarioResult> {
  for (const request of requests) {
    request.requestedAt = epochMs();
    const response = await fetch(`${f.api.url}/v1/settle`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ verification_id: request.verificationId, destination_address: devnet.accounts.merchant.address }),
    });
    request.status = response.status;
    const body = (await response.json()) as { settlement_id?: string };
    if (response.status !== 200 || !body.settlement_id) continue;
    request.settlementId = body.settlement_id;
    await waitForFinal(f.db, [body.settlement_id], 30_000);
  }
  const outcome = await settleOutcome(f.db, requests);
  const gas = await gasOf(f.db, devnet, acceptedIds(requests));
  return {
    ...phase,
    load: `${requests.length} settle requests (Form B), each sent once the previous settlement was final`,
    ...counts(outcome),
    ...gas,
    gasPerSettlement: outcome.settled > 0 ? round(gas.gasUsedTotal / outcome.settled, 0) : NaN,
  };
}

const saving = (ours: GasScenarioResult | undefined, sequential: GasScenarioResult | undefined) =>
  ours && sequential && Number.isFinite(ours.gasPerSettlement) && Number.isFinite(sequential.gasPerSettlement)
    ? round((1 - ours.gasPerSettlement / sequential.gasPerSettlement) * 100, 1)
    : null;

export async function runGasBench(): Promise<GasResults> {
  const settings: GasResults['settings'] = {
    relayers: envNumber('BENCH_GAS_RELAYERS', 3),
    apiProcesses: envNumber('BENCH_API_PROCESSES', 2),
    warmupPerWorker: envNumber('BENCH_GAS_WARMUP', 10),
    sequentialCount: envNumber('BENCH_GAS_SEQUENTIAL', 600),
    sequentialConcurrency: envNumber('BENCH_GAS_SEQUENTIAL_CONCURRENCY', 64),
    singleCount: envNumber('BENCH_GAS_SINGLE', 20),
    batchedCount: envNumber('BENCH_GAS_BATCHED', 600),
    batchedConcurrency: envNumber('BENCH_GAS_CONCURRENCY', 64),
    batchedWindowMs: envNumber('BENCH_GAS_BATCH_WINDOW_MS', 200),
    workerLogLevel: 'info',
    mechanismCount: process.env.BENCH_GAS_MECHANISM_COUNT === '0' ? 0 : envNumber('BENCH_GAS_MECHANISM_COUNT', 10),
  };
  const timeoutMs = envNumber('BENCH_GAS_TIMEOUT_SECONDS', 60) * 1000;
  const total = 3 * settings.warmupPerWorker + settings.sequentialCount + settings.singleCount + 2 * settings.batchedCount;
  const busy = await waitForQuietMachine();
  if (busy > 0.15) log(`machine still ${Math.round(busy * 100)}% busy with other work; measuring anyway`);
  const startedAt = new Date().toISOString();

  const mechanismCount = settings.mechanismCount ?? 0;
  const spend = mechanismSpend(mechanismCount);
  const devnet = await startChain({ relayerCount: settings.relayers, payerSpend: BigInt(total + 10) * PRICE_UNITS + 2n * spend.payer, fees: total + 2 * spend.fees });
  const unregisterChain = stopChainOnSignal(devnet);
  let facilitator: Facilitator | undefined;
  let problems: LogProblems | undefined;
  try {
    const relayers = devnet.accounts.relayers.slice(0, settings.relayers);
    log('setting up the settlement executor (EIP-7702 delegation of the treasury)');
    await setUpDevnetExecutor(devnet, FEE_UNITS, relayers);
    const f = await startFacilitator(devnet, {
      relayerKeys: relayers.map((r) => r.privateKey),
      apiProcesses: settings.apiProcesses,
      workerEnv: { SETTLEMENT_MODE: 'sequential' },
    });
    facilitator = f;
    log(`verifying ${total} payments (not timed)`);
    const ids = await verifyPayments(f.api.url, new PaymentFactory(devnet), total);
    let next = 0;
    const take = (count: number): SettleRequest[] => ids.slice(next, (next += count)).map((verificationId) => ({ verificationId, requestedAt: 0 }));
    const scenarios: GasScenarioResult[] = [];
    const mechanisms: MechanismGasResult[] = [];
    if (mechanismCount > 0) await approvePermit2Once(devnet);

    log(`sequential: warm-up, then a burst of ${settings.sequentialCount} at concurrency ${settings.sequentialConcurrency}`);
    await warmUp(f, devnet, take(settings.warmupPerWorker));
    scenarios.push(await burst(f, devnet, { scenario: 'sequential (fee + transfer)', settlementMode: 'sequential', batchWindowMs: null }, take(settings.sequentialCount), settings.sequentialConcurrency, timeoutMs));
    if (mechanismCount > 0) mechanisms.push(...(await mechanismGas(f, devnet, mechanismCount)));

    await f.restartWorker({ SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '0' });
    log(`atomic, BATCH_WINDOW_MS=0: warm-up, ${settings.singleCount} one at a time, then a burst of ${settings.batchedCount} at concurrency ${settings.batchedConcurrency}`);
    await warmUp(f, devnet, take(settings.warmupPerWorker));
    scenarios.push(await oneAtATime(f, devnet, { scenario: 'atomic, one at a time', settlementMode: 'atomic', batchWindowMs: 0 }, take(settings.singleCount)));
    if (mechanismCount > 0) mechanisms.push(...(await mechanismGas(f, devnet, mechanismCount)));
    scenarios.push(await burst(f, devnet, { scenario: 'atomic, burst, BATCH_WINDOW_MS=0 (default)', settlementMode: 'atomic', batchWindowMs: 0 }, take(settings.batchedCount), settings.batchedConcurrency, timeoutMs));

    await f.restartWorker({ SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: String(settings.batchedWindowMs) });
    log(`atomic, BATCH_WINDOW_MS=${settings.batchedWindowMs}: warm-up, then a burst of ${settings.batchedCount} at concurrency ${settings.batchedConcurrency}`);
    await warmUp(f, devnet, take(settings.warmupPerWorker));
    const batchedName = `atomic, batched (burst, BATCH_WINDOW_MS=${settings.batchedWindowMs})`;
    scenarios.push(await burst(f, devnet, { scenario: batchedName, settlementMode: 'atomic', batchWindowMs: settings.batchedWindowMs }, take(settings.batchedCount), settings.batchedConcurrency, timeoutMs));

    await new Promise((resolve) => setTimeout(resolve, 500)); // late log lines
    problems = f.problems();
    const sequential = scenarios[0];
    const batched = scenarios[3];
    const batchedSaving = saving(batched, sequential);
    const clean = (s: GasScenarioResult) => s.failed === 0 && s.unfinished === 0 && s.rejected === 0;
    return {
      benchmark: 'settle-gas',
      startedAt,
      machine: machineInfo(),
      versions: await versions(),
      settings,
      scenarios,
      ...(mechanisms.length ? { mechanisms } : {}),
      savingsPercent: { atomicOneAtATime: saving(scenarios[1], sequential), atomicBatched: batchedSaving, atomicDefaultWindowBurst: saving(scenarios[2], sequential) },
      targets: {
        batchedSavingMinPercent: GAS_TARGETS.batchedSavingMinPercent,
        batchedSavingMet: batchedSaving === null ? null : batchedSaving >= GAS_TARGETS.batchedSavingMinPercent && clean(batched),
        batchedMinPerSecond: GAS_TARGETS.batchedMinPerSecond,
        batchedThroughputMet: batched.throughput ? batched.throughput.perSecond >= GAS_TARGETS.batchedMinPerSecond && clean(batched) : null,
      },
      problems,
    };
  } finally {
    if (facilitator && !problems) describeProblems('facilitator', facilitator.problems());
    await facilitator?.stop().catch((err: unknown) => log(`stopping: ${(err as Error).message}`));
    await devnet.stop();
    unregisterChain();
  }
}

export function printGas(r: GasResults): void {
  const rows: Array<Array<string | number>> = [['scenario', 'settled', 'failed', 'unfinished', 'transactions', 'gas/settlement', 'mean gas/tx', 'batches', 'mean batch', 'max batch', 'offered/s', 'settled/s', 'p50 ms']];
  for (const s of r.scenarios) {
    rows.push([
      s.scenario,
      s.settled,
      s.failed,
      s.unfinished,
      Object.entries(s.transactions).map(([p, n]) => `${n} ${p}`).join(', '),
      s.gasPerSettlement,
      Object.entries(s.meanGasPerTransaction).map(([p, g]) => `${p} ${g}`).join(', '),
      s.batches?.count ?? '',
      s.batches?.meanSize ?? '',
      s.batches?.maxSize ?? '',
      s.throughput?.offeredPerSecond ?? '',
      s.throughput?.perSecond ?? '',
      s.throughput?.latencyMs.p50 ?? '',
    ]);
  }
  process.stdout.write(`\ngas per settlement, automine — ${r.machine.cpuModel}, ${r.machine.cores} cores\n${table(rows)}\n`);
  const verdict = (met: boolean | null) => (met === null ? 'not measured' : met ? 'met' : 'MISSED');
  process.stdout.write(
    `saving vs sequential: one at a time ${r.savingsPercent.atomicOneAtATime}%, batched ${r.savingsPercent.atomicBatched}% (target ≥ ${r.targets.batchedSavingMinPercent}%: ${verdict(r.targets.batchedSavingMet)}), ` +
      `default-window burst ${r.savingsPercent.atomicDefaultWindowBurst}%\n` +
      `batched throughput ≥ ${r.targets.batchedMinPerSecond}/s: ${verdict(r.targets.batchedThroughputMet)}\n`,
  );
  if (r.mechanisms?.length) {
    const m: Array<Array<string | number>> = [['mechanism', 'path', 'settled', 'gas/settlement', 'by purpose', 'first failure']];
    for (const x of r.mechanisms) m.push([x.mechanism, x.path, `${x.settled}/${x.requests}`, x.gasPerSettlement ?? '', JSON.stringify(x.byPurpose), x.firstError ?? '']);
    process.stdout.write(`\ngas per settlement by mechanism, one at a time\n${table(m)}\n`);
  }
  for (const s of r.scenarios) {
    if (s.batches) process.stdout.write(`${s.scenario}: batch sizes ${JSON.stringify(s.batches.sizes)}${s.batches.itemsOutsideThisRun ? `, ${s.batches.itemsOutsideThisRun} items of other runs in them` : ''}\n`);
    if (s.throughput && Object.keys(s.throughput.failureCodes).length) process.stdout.write(`${s.scenario}: failures ${JSON.stringify(s.throughput.failureCodes)}\n`);
    if (s.cpu) process.stdout.write(`${s.scenario}: CPU cores ${JSON.stringify(s.cpu.cores)}\n`);
  }
  if (r.problems.errors + r.problems.warnings > 0) {
    process.stdout.write(`facilitator: ${r.problems.errors} error / ${r.problems.warnings} warning lines: ${r.problems.messages.map((m) => `${m.level} ×${m.count} ${m.message}`).join('; ')}\n`);
  }
}

if (require.main === module) runBenchmarkMain('settle-gas', runGasBench, printGas);
