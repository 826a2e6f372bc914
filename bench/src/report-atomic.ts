// BENCHMARKS.md sections of the settlement-path benchmarks: paid requests through the x402 middleware
// (ours atomic and sequential against @x402/evm's exact facilitator) and gas per settlement.
import type { LogProblems } from './app-logs';
import { isReference, type PaidPhase, type PaidResults, type PaidTargetResult } from './paid-request-bench';
import { header, interference, n, row } from './report-load';
import type { GasResults } from './settle-gas-bench';

const measured = (r: { startedAt: string; versions?: Record<string, string> }) => `Measured ${r.startedAt}${r.versions?.commit ? ` at commit ${r.versions.commit}` : ''}.`;
const verdict = (met: boolean | null | undefined) => (met === null || met === undefined ? 'not measured' : met ? '**met**' : '**missed**');

function problemLines(name: string, p: LogProblems | undefined): string[] {
  if (!p || p.warnings + p.errors === 0) return [`- ${name}: no warning or error lines.`];
  return [`- ${name}: ${p.errors} error and ${p.warnings} warning lines: ${p.messages.map((m) => `${m.level} ×${m.count} “${m.message}”`).join('; ')}.`];
}

function targetRow(t: PaidTargetResult, phase: PaidPhase, withRate: boolean): string {
  const ratio = isReference(t.target) ? '1.00' : phase.ratios[t.target] ? `${n(phase.ratios[t.target]!.p50, 2)} / ${n(phase.ratios[t.target]!.p95, 2)} / ${n(phase.ratios[t.target]!.mean, 2)}` : '–';
  return row([
    t.label,
    `${t.paid} / ${t.requests}`,
    `**${n(t.latencyMs.p50)}**`,
    n(t.latencyMs.p95),
    n(t.latencyMs.mean),
    ratio,
    ...(withRate ? [n(t.perSecond, 1)] : []),
    t.requestToSettledMs ? `${n(t.requestToSettledMs.p50)} / ${n(t.requestToSettledMs.p95)}` : '–',
    t.meanBatchSize === undefined ? '–' : n(t.meanBatchSize, 2),
  ]);
}

function phaseTable(phase: PaidPhase, withRate: boolean): string[] {
  return [
    ...header([
      'facilitator',
      'paid / requests',
      'p50 ms',
      'p95 ms',
      'mean ms',
      '÷ reference (p50 / p95 / mean)',
      ...(withRate ? ['paid/s'] : []),
      'request → `settled` p50 / p95 ms',
      'settlements per transaction',
    ]),
    ...phase.targets.map((t) => targetRow(t, phase, withRate)),
  ];
}

export function paidSection(r: PaidResults): string[] {
  const s = r.settings;
  const phases = [r.sequential, ...(r.concurrent ? [r.concurrent] : []), ...(r.permit2 ? [r.permit2] : [])];
  const ours = phases.flatMap((p) => p.targets).filter((t) => t.stagesMsP50);
  const failures = phases.flatMap((p) => p.targets).filter((t) => t.failed > 0 || (t.settlements && t.settlements.settled !== t.requests));
  return [
    '## Paid requests through the x402 middleware: `npm run bench:paid`',
    '',
    measured(r),
    '',
    `One anvil with ${s.blockTimeSeconds} s blocks and three facilitators on it at once: ours with the atomic path (the treasury delegates by EIP-7702 to the settlement executor; fee and transfer in one \`settle\` transaction), ` +
      'ours with `SETTLEMENT_MODE=sequential` (fee `transferFrom`, then the payer\'s `transferWithAuthorization`), each the compiled API ' +
      `(API_PROCESSES=${s.apiProcesses}) and worker with a database of its own and one relayer key, and the reference: @x402/core's \`x402Facilitator\` with @x402/evm's exact scheme (\`registerExactEvmScheme\`) on a viem wallet client, ` +
      `no fee, behind \`POST /verify\`, \`POST /settle\`, \`GET /supported\` in a process of its own (viem receipt polling every ${s.referencePollingIntervalMs} ms, as our worker polls). ` +
      `Each facilitator serves an Express app protected by @x402/express's \`paymentMiddleware\` (HTTPFacilitatorClient, @x402/evm's exact server scheme), selling a resource for ${n(Number(s.priceUnits) / 1e6, 2)} USDC; ` +
      "the buyer is @x402/fetch's `wrapFetchWithPayment` with the devnet payer's key. A request is timed from the client's call to the resource's body (402, signing, the paid retry, /verify, the handler, /settle — which waits for the chain — and the answer). " +
      `For ours, request → \`settled\` runs to the worker's \`settled\` row (same machine clock), matched to the request by the payment's nonce. ${s.warmupRequests} paid requests per facilitator warm up first (not counted).`,
    '',
    `**One at a time**: ${r.sequential.load}.`,
    '',
    ...phaseTable(r.sequential, false),
    '',
    ...(r.concurrent ? [`**Concurrent**: ${r.concurrent.load}.`, '', ...phaseTable(r.concurrent, true), ''] : []),
    ...(r.permit2 ? permit2Lines(r.permit2) : []),
    `- Ours, atomic, one at a time, request → \`settled\` p50 ≤ 1 block + 0.3 s (${n(r.targets.requestToSettledP50MaxMs)} ms): ${verdict(r.targets.requestToSettledMet)}.`,
    ...ours.map(
      (t) =>
        `- ${t.label}, ${r.concurrent?.targets.includes(t) ? 'concurrent' : 'one at a time'}: median ms from the request to ${Object.entries(t.stagesMsP50!).map(([state, ms]) => `${state} ${n(ms)}`).join(', ')}; \`settled\` → resource at the client ${n(t.settledToResponseMsP50)} ms.`,
    ),
    ...failures.map(
      (t) =>
        `- ⚠ ${t.label}: ${t.failed} of ${t.requests} requests not paid${t.firstError ? ` (first: ${t.firstError})` : ''}${t.settlements ? `; settlements ${JSON.stringify(t.settlements)}` : ''}.`,
    ),
    ...interference(Math.max(...phases.map((p) => p.cpu.cores.other ?? 0))),
    '',
    'Warning and error lines written during the run:',
    '',
    ...problemLines('ours, atomic (API and worker)', r.problems.atomic),
    ...problemLines('ours, sequential (API and worker)', r.problems.sequential),
    ...problemLines('reference', r.problems.reference),
    '',
  ];
}

/**
 * `exact` through Permit2 side by side with the reference through Permit2: the latency table, and the gas a
 * paid request used on chain (ours: the fee's transaction and the proxy's; the reference: the proxy's).
 */
function permit2Lines(phase: PaidPhase): string[] {
  const gas = phase.targets.filter((t) => t.gasPerPayment);
  return [
    `**exact through Permit2** (\`extra.assetTransferMethod: "permit2"\` in the merchant's requirements; the payer approved Permit2 once before): ${phase.load}. Ours settles it on the sequential path (the executor of the atomic path runs EIP-3009 items only): the fee \`transferFrom\` from the treasury, then x402's exact proxy's \`settle\` from a relayer; the reference sends the proxy's \`settle\` alone.`,
    '',
    ...phaseTable(phase, false),
    '',
    ...gas.map(
      (t) =>
        `- ${t.label}: **${n(t.gasPerPayment!.total)} gas** per paid request (${Object.entries(t.gasPerPayment!.byPurpose).map(([purpose, g]) => `${purpose} ${n(g)}`).join(', ')}).`,
    ),
    '',
  ];
}

export function gasSection(r: GasResults): string[] {
  const s = r.settings;
  const batched = r.scenarios[3];
  return [
    '## Gas per settlement: `npm run bench:gas`',
    '',
    measured(r),
    '',
    `Anvil with automine, the treasury delegating to the settlement executor, one database, the compiled API (API_PROCESSES=${s.apiProcesses}) and worker (LOG_LEVEL=${s.workerLogLevel}, ${s.relayers} relayer keys), restarted with each path's settings; ` +
      `payments verified first (not timed), ${s.warmupPerWorker} settlements after each worker start not counted. Gas is each transaction's \`gasUsed\` from its receipt (\`chain_transactions.mined_hash\`): ` +
      'for sequential the fee and transfer transactions of each settlement, for atomic every `settle` transaction (batch) holding the measured settlements; divided by the settlements settled. ' +
      `**one at a time**: each Form B settle request sent once the previous settlement was final (one item per transaction). **burst**: settle requests sent by autocannon (Form B, answered \`pending\` at once), ${s.batchedConcurrency} in flight${s.sequentialConcurrency === s.batchedConcurrency ? '' : ` (${s.sequentialConcurrency} for sequential)`}; ` +
      'settled/s from the first request to the last `settled`, latency from the request to `settled`.',
    '',
    ...header(['path', 'settled', 'failed / unfinished', 'transactions', 'gas per settlement', 'mean gas per transaction', 'settlements per transaction (mean / max)', 'requests sent/s', 'settled/s', 'request → settled p50 / p95 ms']),
    ...r.scenarios.map((sc) =>
      row([
        sc.scenario,
        `${sc.settled} / ${sc.settlements}`,
        `${sc.failed} / ${sc.unfinished}`,
        Object.entries(sc.transactions).map(([p, c]) => `${c} ${p}`).join(', '),
        `**${n(sc.gasPerSettlement)}**`,
        Object.entries(sc.meanGasPerTransaction).map(([p, g]) => `${p} ${n(g)}`).join(', '),
        sc.batches ? `${n(sc.batches.meanSize, 2)} / ${sc.batches.maxSize}` : '1 (two transactions each)',
        sc.throughput ? n(sc.throughput.offeredPerSecond, 1) : '–',
        sc.throughput ? `**${n(sc.throughput.perSecond, 1)}**` : '–',
        sc.throughput ? `${n(sc.throughput.latencyMs.p50)} / ${n(sc.throughput.latencyMs.p95)}` : '–',
      ]),
    ),
    '',
    `- Gas saved per settlement against sequential: one at a time ${n(r.savingsPercent.atomicOneAtATime ?? undefined, 1)} %, batched ${n(r.savingsPercent.atomicBatched ?? undefined, 1)} %, burst with the default window ${n(r.savingsPercent.atomicDefaultWindowBurst ?? undefined, 1)} %.`,
    `- Batched ≥ ${r.targets.batchedSavingMinPercent} % below sequential: ${verdict(r.targets.batchedSavingMet)}.`,
    `- Batched throughput (automine) ≥ ${r.targets.batchedMinPerSecond} settlements/s: ${verdict(r.targets.batchedThroughputMet)}${batched?.throughput ? ` (${n(batched.throughput.perSecond, 1)}/s)` : ''}.`,
    ...r.scenarios
      .filter((sc) => sc.unfinished > 0 || sc.failed > 0 || sc.rejected > 0)
      .map(
        (sc) =>
          `- ⚠ ${sc.scenario}: ${sc.unfinished} settlements unfinished when the wait ended${sc.unfinishedStates ? ` (${Object.entries(sc.unfinishedStates).map(([state, c]) => `${c} in ${state}`).join(', ')})` : ''}, ${sc.failed} failed${sc.throughput && Object.keys(sc.throughput.failureCodes).length ? ` (${JSON.stringify(sc.throughput.failureCodes)})` : ''}, ${sc.rejected} settle requests refused; gas is counted over the settled ones only.`,
      ),
    ...r.scenarios.filter((sc) => sc.batches).map((sc) => `- ${sc.scenario}: transactions by settlements they carried ${Object.entries(sc.batches!.sizes).map(([size, count]) => `${count}× ${size}`).join(', ')}.`),
    ...r.scenarios
      .filter((sc) => sc.throughput)
      .map((sc) => {
        const m = sc.throughput!.medianStagesMs;
        return `- ${sc.scenario}: median ms request → worker pick-up ${n(m.toPickup)}, allowance check ${n(m.checkAllowance)}, \`collect_fee\` → \`fee_collected\` ${n(m.feeTransfer)} (atomic: batching, sending and mining the \`settle\` transaction), then ${n(m.submitTransfer)} + ${n(m.transferConfirmed)} to \`settled\`; CPU cores ${sc.cpu ? Object.entries(sc.cpu.cores).map(([k, v]) => `${k} ${v}`).join(', ') : '–'}.`;
      }),
    ...interference(Math.max(0, ...r.scenarios.map((sc) => sc.cpu?.cores.other ?? 0))),
    ...problemLines('Warning and error lines of the API and workers', r.problems),
    '',
  ];
}
