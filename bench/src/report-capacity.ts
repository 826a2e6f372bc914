// The BENCHMARKS.md section of bench:capacity: settlements offered at once on real block times, against
// issue 27's targets.
import type { CapacityResults, CapacityScenario } from './capacity-bench';
import { header, interference, n, row } from './report-load';

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
  return [
    '## Capacity on real block times: `npm run bench:capacity`',
    '',
    `Measured ${r.startedAt}${r.versions?.commit ? ` at commit ${r.versions.commit}` : ''}.`,
    '',
    `For each chain cadence and worker count, a fresh stack on the atomic path (the treasury delegates to the settlement executor; ${s.relayers} relayer keys; API_PROCESSES=${s.apiProcesses}; SETTLEMENT_CONCURRENCY ${s.settlementConcurrency}) settles ${n(s.settlements)} payments offered at once (Form B, verified before and not timed; ${s.warmupSettlements} settlements warm each stack up). ` +
      'settled/s runs from the first settle request to the last `settled` transition; latency from just before each request to its `settled` row; blocks from the first mined settle transaction to the last, both counted (anvil\'s 30M gas limit fits about 500 settlements a block). A settlement job holds its slot only while it works, not while its block comes (docs/decisions.md, "No job holds a slot while it waits for a block").',
    '',
    ...header(['chain', 'workers', 'settled/s', 'p50 ms', 'p99 ms', 'blocks', 'settle txs', 'settled', 'failed', 'unfinished', 'rejected', 'CPU cores']),
    ...lines,
    '',
    ...targets,
    `- Where missed, the cause measured: not the job slots any more (a settlement gives its slot up while its block comes) nor the chain (the settle transactions carry ${n(Math.max(...r.scenarios.map((c) => c.settlements / Math.max(1, c.settleTransactions))), 0)} settlements at most and fill a fraction of a block's gas), but the work per settlement on this 2-core machine: all processes together used ${r.scenarios.map((c) => n(Object.values(c.cores).reduce((a, b) => a + b, 0), 1)).join(', ')} cores in the rows above, anvil and Postgres the most. Fewer reads and statements per settlement (issue 27, items 2 and 3) are what is left.`,
    ...interference(Math.max(0, ...r.scenarios.map((c) => c.cores.other ?? 0))),
    '',
  ];
}
