// The BENCHMARKS.md section of bench:capacity: settlements offered at once on real block times, against
// issue 27's targets.
import type { CapacityResults, CapacityScenario } from './capacity-bench';
import { cpuMsPerOperation, header, interference, n, row } from './report-load';
import { x402CapacityLines } from './report-x402-capacity';

const verdict = (met: boolean | undefined) => (met === undefined ? 'not measured' : met ? '**met**' : '**missed**');
const chain = (s: CapacityScenario) => (s.blockTimeSeconds === null ? 'automine' : `${s.blockTimeSeconds} s blocks`);

/** Issue 27's targets for one scenario; undefined where the scenario has none. */
export function capacityTargets(s: CapacityScenario): { blocks?: boolean; rate: boolean; p50?: boolean } {
  const complete = s.failed === 0 && s.unfinished === 0 && s.rejected === 0;
  const rate = complete && s.settledPerSecond >= 300;
  if (s.blockTimeSeconds === null) return { rate };
  return { blocks: complete && s.blocks <= 3, rate, p50: s.latencyMs.p50 <= s.blockTimeSeconds * 1000 + 500 };
}

export function capacitySection(r: CapacityResults): string[] {
  const s = r.settings;
  const lines = r.scenarios.map((c) =>
    row([chain(c), c.workers, `**${n(c.settledPerSecond, 1)}**`, n(c.latencyMs.p50), n(c.latencyMs.p99), c.blockTimeSeconds === null ? '–' : c.blocks, c.settleTransactions, c.settled, c.failed, c.unfinished, c.rejected, Object.entries(c.cores).map(([k, v]) => `${k} ${v}`).join(', ')]),
  );
  const targets = r.scenarios.map((c) => {
    const t = capacityTargets(c);
    const parts = [`≥ 300 settled/s ${verdict(t.rate)}`];
    if (t.blocks !== undefined) parts.push(`within 3 blocks of the first ${verdict(t.blocks)}`);
    if (t.p50 !== undefined) parts.push(`p50 ≤ one block + 0.5 s ${verdict(t.p50)}`);
    return `- ${chain(c)}, ${c.workers} worker(s): ${parts.join('; ')}.`;
  });
  const measured = `Measured ${r.startedAt}${r.versions?.commit ? ` at commit ${r.versions.commit}` : ''}.`;
  const issue41 = x402CapacityLines(r);
  if (r.scenarios.length === 0) return ['## Capacity: `npm run bench:capacity`', '', measured, '', ...issue41];
  return [
    ...(issue41.length ? ['## Capacity: `npm run bench:capacity`', '', measured, '', ...issue41, '### On real block times (issue 27)'] : ['## Capacity on real block times: `npm run bench:capacity`', '', measured]),
    '',
    `For each chain cadence and worker count, a fresh stack on the atomic path (the treasury delegates to the settlement executor; ${s.relayers} relayer keys; API_PROCESSES=${s.apiProcesses}; SETTLEMENT_CONCURRENCY ${s.settlementConcurrency}) settles ${n(s.settlements)} payments offered at once (Form B, verified before and not timed; ${s.warmupSettlements} settlements warm each stack up). ` +
      'settled/s runs from the first settle request to the last `settled` transition; latency from just before each request to its `settled` row; blocks from the first mined settle transaction to the last, both counted (anvil\'s 30M gas limit fits about 500 settlements a block). A settlement job holds its slot only while it works, not while its block comes (docs/decisions.md, "No job holds a slot while it waits for a block").',
    '',
    ...header(['chain', 'workers', 'settled/s', 'p50 ms', 'p99 ms', 'blocks', 'settle txs', 'settled', 'failed', 'unfinished', 'rejected', 'CPU cores']),
    ...lines,
    '',
    ...targets,
    ...capacityCause(r),
    ...interference(Math.max(0, ...r.scenarios.map((c) => c.cores.other ?? 0))),
    '',
  ];
}

/** CPU of each process per settlement in one scenario, in ms: its cores over the run divided by the rate. */
function cpuMsPerSettlement(c: CapacityScenario): { total: number; ours: number; node: number } {
  const ms = cpuMsPerOperation(c.cores, c.settledPerSecond);
  const ours = ['api', 'worker', 'worker2', 'postgres', 'redis'].reduce((sum, p) => sum + (ms[p] ?? 0), 0);
  const node = ms.anvil ?? 0;
  return { total: ours + node + (ms.bench ?? 0), ours, node };
}

/**
 * Why a rate target is missed, from the figures of the rows: the machine's cores divided by the CPU all
 * processes spent per settlement is the rate this machine can reach at most, whatever the slots or blocks.
 */
function capacityCause(r: CapacityResults): string[] {
  const cores = r.machine.cores;
  const missed = r.scenarios.filter((c) => !capacityTargets(c).rate);
  if (missed.length === 0) return [];
  const cpuOf = new Map(missed.map((c) => [c, cpuMsPerSettlement(c)]));
  const perRow = missed.map((c) => {
    const cpu = cpuOf.get(c)!;
    return `${chain(c)} with ${c.workers} worker(s): ${n(cpu.total, 1)} ms (anvil ${n(cpu.node, 1)}, API + workers + Postgres + Redis ${n(cpu.ours, 1)}), so at most ${n((cores * 1000) / cpu.total, 0)}/s on ${cores} cores against ${n(c.settledPerSecond, 1)}/s measured`;
  });
  const best = Math.min(...missed.map((c) => cpuOf.get(c)!.ours));
  const nodeShare = Math.max(...missed.map((c) => cpuOf.get(c)!.node / cpuOf.get(c)!.total));
  const mostPerBatch = Math.max(...r.scenarios.map((c) => c.settlements / Math.max(1, c.settleTransactions)));
  const blocky = missed.filter((c) => c.blockTimeSeconds !== null);
  return [
    `- Where missed, the cause measured: CPU per settlement on this ${cores}-core machine, not the job slots (a settlement gives its slot up while its block comes) nor the chain (the settle transactions carry ${n(mostPerBatch, 0)} settlements each on average at most, a fraction of a block's gas). Every process of the stack shares the ${cores} cores, and the CPU they spent per settlement (their cores over the run ÷ the rate) caps the rate:`,
    ...perRow.map((line) => `  - ${line}.`),
    ...(blocky.length
      ? [
          `- The block and latency targets follow from the rate: at its ceiling, ${n(r.settings.settlements)} settlements offered at once take at least ${blocky
            .map((c) => {
              const seconds = r.settings.settlements / ((cores * 1000) / cpuOf.get(c)!.total);
              return `${n(seconds, 1)} s, ${Math.ceil(seconds / c.blockTimeSeconds!)} blocks (${chain(c)}, ${c.workers} worker(s))`;
            })
            .join('; ')}, where 3 blocks are the target, and the median settlement waits about half of that, not one block.`,
        ]
      : []),
    `- 300 settled/s on ${cores} cores needs at most ${n((cores * 1000) / 300, 1)} ms of CPU per settlement in all. Anvil, the chain node (in production a provider's machine, not ours), took up to ${Math.round(nodeShare * 100)} % of it: it simulates each settlement's transfer before the fee and then mines it. Without it, our own processes still spend ${n(best, 1)} ms per settlement at best, which caps one machine at ${n((cores * 1000) / best, 0)}/s: fewer statements and reads per settlement (issue 27, item 2), not more processes, are what is left.`,
  ];
}
