// BENCHMARKS.md sections of the settlement-path benchmarks: paid requests through the x402 middleware
// (ours atomic and sequential against @x402/evm's exact and upto facilitator, for `exact` by EIP-3009 and
// through Permit2 and `upto` through Permit2) and gas per settlement.
import type { LogProblems } from './app-logs';
import { isReference, type PaidPhase, type PaidResults, type PaidTargetResult } from './paid-request-bench';
import { header, interference, n, row } from './report-load';
import { MECHANISM_LABELS, MECHANISMS } from './mechanism-gas';
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

/** Whether other work shared the machine during the run, and how to read the figures then. */
function sharedLines(r: PaidResults, otherCores: number): string[] {
  const busy = r.busyBeforeStart !== undefined && r.busyBeforeStart > 0.15;
  if (!r.machineNote && !busy && otherCores < 0.1) return [];
  const facts = [
    ...(r.machineNote ? [r.machineNote.replace(/\.$/, '')] : []),
    ...(busy ? [`${Math.round(r.busyBeforeStart! * 100)} % of the CPU was busy with other work when it started`] : []),
    `other processes used up to ${otherCores} cores during its phases`,
  ];
  return [
    `**The machine (${r.machine.cores} cores) was shared during this run**: ${facts.join('; ')}. Read the facilitators against each other by the ratios measured in this same run (each phase runs its facilitators at once against one chain, so they share the same interference), not by comparing absolute figures with other runs.`,
    '',
  ];
}

export function paidSection(r: PaidResults): string[] {
  const s = r.settings;
  const phases = [r.sequential, ...(r.concurrent ? [r.concurrent] : []), ...(r.permit2 ? [r.permit2] : []), ...(r.upto ? [r.upto] : [])];
  const ours = phases.flatMap((p) => p.targets).filter((t) => t.stagesMsP50);
  const failures = phases.flatMap((p) => p.targets).filter((t) => t.failed > 0 || (t.settlements && t.settlements.settled !== t.requests));
  return [
    '## Paid requests through the x402 middleware: `npm run bench:paid`',
    '',
    measured(r),
    '',
    ...sharedLines(r, Math.max(...phases.map((p) => p.cpu.cores.other ?? 0))),
    `One anvil with ${s.blockTimeSeconds} s blocks and three facilitators on it at once: ours with the atomic path (the treasury delegates by EIP-7702 to the settlement executor; fee and transfer in one \`settle\` transaction), ` +
      'ours with `SETTLEMENT_MODE=sequential` (fee `transferFrom`, then the payer\'s `transferWithAuthorization`), each the compiled API ' +
      `(API_PROCESSES=${s.apiProcesses}) and worker with a database of its own and one relayer key, and the reference: @x402/core's \`x402Facilitator\` with @x402/evm's exact scheme (\`registerExactEvmScheme\`) and upto scheme (\`UptoEvmScheme\`) on a viem wallet client, ` +
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
    ...(r.upto ? uptoLines(r.upto, r.settings) : []),
    ...gasByMechanismLines(r),
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

function gasLines(phase: PaidPhase): string[] {
  return phase.targets
    .filter((t) => t.gasPerPayment)
    .map((t) => `- ${t.label}: **${n(t.gasPerPayment!.total)} gas** per paid request (${Object.entries(t.gasPerPayment!.byPurpose).map(([purpose, g]) => `${purpose} ${n(g)}`).join(', ')}).`);
}

/**
 * `exact` through Permit2 side by side with the reference through Permit2: the latency table, and the gas a
 * paid request used on chain (ours: the fee's transaction and the proxy's, or its share of the executor's
 * `settle`; the reference: the proxy's).
 */
function permit2Lines(phase: PaidPhase): string[] {
  const atomic = phase.targets.some((t) => t.target === 'permit2-atomic');
  return [
    `**exact through Permit2** (\`extra.assetTransferMethod: "permit2"\` in the merchant's requirements; the payer approved Permit2 once before): ${phase.load}. ` +
      (atomic
        ? "Ours on the atomic path: the fee and x402's exact proxy's `settle` as one item of the treasury's executor, in one transaction from a relayer; on the sequential path: the fee `transferFrom` from the treasury, then the proxy's `settle` from a relayer; the reference sends the proxy's `settle` alone."
        : "Ours settles it on the sequential path (the executor of the atomic path ran EIP-3009 items only then): the fee `transferFrom` from the treasury, then x402's exact proxy's `settle` from a relayer; the reference sends the proxy's `settle` alone."),
    '',
    ...phaseTable(phase, false),
    '',
    ...gasLines(phase),
    '',
  ];
}

/** `upto` through Permit2: ours on both paths and @x402/evm's upto facilitator, the merchant settling part of the maximum. */
function uptoLines(phase: PaidPhase, s: PaidResults['settings']): string[] {
  return [
    `**upto through Permit2** (the merchant's requirements: scheme \`upto\`, @x402/evm's upto server scheme, a maximum of ${n(Number(s.priceUnits) / 1e6, 2)} USDC; its handler settles ${n(Number(s.uptoSettledUnits) / 1e6, 2)} USDC of it with @x402/express's \`setSettlementOverrides\`, above our ${n(Number(s.feeUnits) / 1e6, 2)} USDC fee, so the fee is taken; the payer is @x402/evm's upto client, its witness naming the facilitator that /supported advertises as \`extra.facilitatorAddress\`: the treasury for ours, the reference's key for the reference): ${phase.load}. ` +
      "Ours on the atomic path: the fee and x402's upto proxy's `settle` (sent as the treasury, the facilitator the witness names) as one item of the treasury's executor, one transaction from a relayer; on the sequential path: the fee `transferFrom`, then the proxy's `settle`, both from the treasury; the reference (@x402/core's `x402Facilitator` with @x402/evm's `UptoEvmScheme` registered, on the same viem signer) sends the proxy's `settle` alone.",
    '',
    ...phaseTable(phase, false),
    '',
    ...gasLines(phase),
    '',
  ];
}

/** The gas of one paid request for each mechanism on each path of this run, side by side (from the receipts). */
function gasByMechanismLines(r: PaidResults): string[] {
  const gas = (phase: PaidPhase | undefined, target: string) => phase?.targets.find((t) => t.target === target)?.gasPerPayment;
  const cell = (g: PaidTargetResult['gasPerPayment']) => (g ? `**${n(g.total)}** (${Object.entries(g.byPurpose).map(([p, v]) => `${p} ${n(v)}`).join(', ')})` : '–');
  const rows: Array<[string, PaidPhase | undefined, [string, string, string]]> = [
    ['exact, EIP-3009 (`transferWithAuthorization`)', r.sequential, ['atomic', 'sequential', 'reference']],
    ['exact through Permit2 (x402 exact proxy)', r.permit2, ['permit2-atomic', 'permit2', 'reference-permit2']],
    [`upto through Permit2 (x402 upto proxy, ${r.settings.uptoSettledUnits ? n(Number(r.settings.uptoSettledUnits) / 1e6, 2) : '–'} of ${n(Number(r.settings.priceUnits) / 1e6, 2)} USDC settled)`, r.upto, ['upto-atomic', 'upto-sequential', 'reference-upto']],
  ];
  const present = rows.filter(([, phase, [a, b, c]]) => gas(phase, a) || gas(phase, b) || gas(phase, c));
  if (present.length === 0) return [];
  return [
    "**Gas per paid request, each mechanism on each path** (this run's one-at-a-time requests; `gasUsed` from the receipts of every transaction of the request's settlement — for ours on the atomic path its share of the executor's `settle` transaction, gasUsed ÷ the settlements it carried — averaged over the paid requests; ours includes the fee, the reference takes none):",
    '',
    ...header(['mechanism', 'ours, atomic (one transaction)', 'ours, sequential (fee, then the payment)', 'reference (no fee)']),
    ...present.map(([label, phase, [a, b, c]]) => row([label, cell(gas(phase, a)), cell(gas(phase, b)), cell(gas(phase, c))])),
    '',
  ];
}

/** Gas per settlement of each payment mechanism on each path (bench:gas's one-at-a-time payments of each). */
function mechanismGasLines(r: GasResults): string[] {
  const results = r.mechanisms ?? [];
  if (results.length === 0) return [];
  const cell = (path: 'atomic' | 'sequential', mechanism: string) => {
    const x = results.find((m) => m.path === path && m.mechanism === mechanism);
    if (!x) return '–';
    if (x.gasPerSettlement === null) return `none settled${x.firstError ? ` (${x.firstError})` : ''}`;
    return `**${n(x.gasPerSettlement)}** (${Object.entries(x.byPurpose).map(([p, g]) => `${p} ${n(g)}`).join(', ')})${x.settled < x.requests ? ` ⚠ ${x.settled} of ${x.requests} settled` : ''}`;
  };
  const upto = results.find((m) => m.mechanism === 'upto-permit2');
  const saving = (mechanism: string) => {
    const a = results.find((m) => m.path === 'atomic' && m.mechanism === mechanism)?.gasPerSettlement;
    const q = results.find((m) => m.path === 'sequential' && m.mechanism === mechanism)?.gasPerSettlement;
    return a && q ? `${n((1 - a / q) * 100, 1)} %` : '–';
  };
  return [
    `**Each payment mechanism on each path**: ${r.settings.mechanismCount} payments of each, one at a time (each settle answered once its settlement was final, so every atomic \`settle\` transaction carried one), paid by @x402/evm's client schemes (x402Client's \`createPaymentPayload\`, as @x402/fetch pays) and sent as the x402 middleware sends them (\`POST /x402/verify\`, then \`POST /x402/settle\`): after the sequential burst by the sequential worker, after the atomic one-at-a-time row by the atomic worker (BATCH_WINDOW_MS=0). ` +
      `Each pays ${n(Number(results[0].signedUnits) / 1e6, 2)} USDC${upto ? `; upto signs that as its maximum and the merchant settles ${n(Number(upto.settledUnits) / 1e6, 2)} USDC of it (\`paymentRequirements.amount\` of the settle request), above the fee` : ''}. ` +
      'Gas per settlement is the mean `gasUsed` from the receipts of every transaction of each settlement: sequential, the fee `transferFrom` (`fee`) and the payment (`transfer`: `transferWithAuthorization`, or the exact or upto proxy\'s `settle`); atomic, the executor\'s `settle` holding the fee and the payment.',
    '',
    ...header(['mechanism', 'atomic (one transaction)', 'sequential (fee, then the payment)', 'atomic saves']),
    ...MECHANISMS.map((m) => row([MECHANISM_LABELS[m], cell('atomic', m), cell('sequential', m), saving(m)])),
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
    ...mechanismGasLines(r),
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
