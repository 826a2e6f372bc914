// Renders BENCHMARKS.md from the JSON results, so the document never disagrees with the measurements.
import type { MachineInfo } from './machine';
import type { CpuUsage } from './proc';
import type { CapacityResults } from './capacity-bench';
import type { CustodyResults } from './custody-bench';
import type { MixedResults } from './mixed-bench';
import type { PaidResults } from './paid-request-bench';
import { gasSection, paidSection } from './report-atomic';
import { capacitySection } from './report-capacity';
import { custodySection } from './report-custody';
import { curveSection, header, interference, mixedSection, n, row, webhookSection } from './report-load';
import type { CurveResults } from './settle-curve';
import type { SettleResults } from './settle-bench';
import { statusSection } from './report-status';
import type { StatusResults } from './status-bench';
import type { GasResults } from './settle-gas-bench';
import type { BreakdownResults, StageCost } from './verify-breakdown';
import type { VerifyResults } from './verify-bench';
import type { WebhookResults } from './webhook-bench';

/** Every result `npm run bench` collects; a part that failed or was skipped is absent. */
export interface AllResults {
  verify?: VerifyResults;
  verifyBreakdown?: BreakdownResults;
  settle?: SettleResults;
  settleCurve?: CurveResults;
  capacity?: CapacityResults;
  webhooks?: WebhookResults;
  mixed?: MixedResults;
  paid?: PaidResults;
  custody?: CustodyResults;
  settleGas?: GasResults;
  status?: StatusResults;
}

const verdict = (met: boolean | null | undefined) => (met === null || met === undefined ? 'not measured' : met ? '**met**' : '**missed**');

function machineSection(r: { machine: MachineInfo; versions: Record<string, string> }): string[] {
  const m = r.machine;
  const v = r.versions;
  return [
    '## Machine and versions',
    '',
    `- ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}`,
    `- commit ${v.commit}; Postgres ${v.postgres}, Redis ${v.redis}, anvil (@foundry-rs/anvil) ${v['@foundry-rs/anvil']}`,
    `- express ${v.express}, ajv ${v.ajv}, @prisma/client ${v['@prisma/client']}, pg ${v.pg}, bullmq ${v.bullmq}, ethers ${v.ethers}, secp256k1 ${v.secp256k1}, winston ${v.winston}`,
    `- load generator autocannon ${v.autocannon}; reference @x402/evm ${v['@x402/evm']} with @x402/core ${v['@x402/core']} and viem ${v.viem}`,
    '- Everything runs on this one machine: the load generator (and the webhook receiver), the API processes, the worker, Postgres, Redis and anvil share the cores.',
    '',
  ];
}

function verifySection(r: VerifyResults): string[] {
  const f = r.facilitator;
  const ref = r.reference;
  const apiPerVerification = cpuMicrosPerOperation(f.cpu, 'api', f.verified);
  const non2xx = Object.entries(f.non2xx).map(([code, count]) => `${count}× ${code}`).join(', ') || 'none';
  return [
    '## Verify: `npm run bench:verify`',
    '',
    `Measured ${r.startedAt}${r.versions?.commit ? ` at commit ${r.versions.commit}` : ''}.`,
    '',
    `Distinct, valid $0.01 payments (${r.settings.requestForm}), each request a different payment, ${r.settings.connections} connections, pipelining 1, ` +
      `${r.settings.warmupSeconds} s warm-up then ${r.settings.seconds} s measured. The API is the compiled app with API_PROCESSES=${r.settings.apiProcesses} (Node cluster), LOG_LEVEL=${r.settings.logLevel}, a fresh database and its own queue prefix. ` +
      `Only 200 answers count as verified. The reference is @x402/evm's exact facilitator scheme (\`ExactEvmScheme.verify\`) in-process against the same anvil, ${ref.concurrency} verifications in flight.`,
    '',
    ...header(['implementation', 'in flight', 'verified/s', 'p50 ms', 'p99 ms', 'verified', 'not verified', 'errors']),
    row(['facilitator `POST /v1/verify` (HTTP)', r.settings.connections, n(f.perSecond, 1), n(f.latencyMs.p50, 1), n(f.latencyMs.p99, 1), n(f.verified), non2xx, f.errors + f.timeouts]),
    row(['@x402/evm exact, in-process', ref.concurrency, n(ref.perSecond, 1), n(ref.latencyMs.p50, 1), n(ref.latencyMs.p99, 1), n(ref.verified), ref.invalid, ref.errors]),
    '',
    `- Ratio to the reference: **${r.ratio}×** — target ≥ ${r.targets.ratioToReference}×: ${verdict(r.targets.ratioMet)}.`,
    `- Rate: **${n(f.perSecond)} verified/s** — target ≥ ${n(r.targets.perSecond)}/s: ${verdict(r.targets.perSecondMet)}.`,
    ...(r.httpShell
      ? [
          `- The HTTP shell on the same API right after (\`{}\` answered 400 by schema validation, same connections and duration): ${n(r.httpShell.perSecond)} answers/s` +
            `${r.httpShell.otherThan400 ? ` (${r.httpShell.otherThan400} answers other than 400)` : ''}; verify runs at **${Math.round(r.ratioToShell * 100)} %** of it — target ≥ ${Math.round(r.targets.ratioToShell * 100)} %: ${verdict(r.targets.ratioToShellMet)}. ` +
            `Where the difference goes: ${n(apiPerVerification)} µs of API CPU per verification against ${n(cpuMicrosPerOperation(r.httpShell.cpu, 'api', Math.max(1, r.httpShell.answered)))} µs per shell answer (the API is CPU-bound in both); the breakdown below splits it into the verification's own work and its database and RPC clients.`,
        ]
      : []),
    ...(f.attempts > 1 || (ref.attempts ?? 1) > 1
      ? [`- Measured runs: ${f.attempts} of the API, ${ref.attempts ?? 1} of the reference (a run disturbed by other work on the machine was repeated; the last one is reported).`]
      : []),
    `- Every 200 stored a row: ${n(f.verifiedRowsInDatabase)} verified rows in Postgres after the run (warm-up, and requests still in flight when each run stopped, included).`,
    `- Peak RSS of the API (primary + workers): ${f.peakRss.totalMiB} MiB (${f.peakRss.perProcessMiB.join(', ')} MiB); ${f.rssAfterStart?.totalMiB ?? '–'} MiB once started, before any load.`,
    `- CPU during the measured run, in cores: ${Object.entries(f.cpu.cores).map(([k, v]) => `${k} ${v}`).join(', ')}; machine ${Math.round(f.cpu.machineBusy * 100)}% busy. ` +
      `That is ${n(apiPerVerification)} µs of API CPU and ${n(cpuMicrosPerOperation(f.cpu, 'postgres', f.verified))} µs of Postgres CPU per verification.`,
    ...interference(f.cpu.cores.other),
    `- Reference CPU (in-process: bench = the reference itself): ${Object.entries(ref.cpu.cores).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
    '',
  ];
}

/** CPU µs one process group spent per operation during a measured run. */
function cpuMicrosPerOperation(usage: CpuUsage, group: string, operations: number): number {
  return ((usage.cores[group] ?? 0) * usage.seconds * 1e6) / operations;
}

function stage(b: BreakdownResults, prefix: string): StageCost | undefined {
  return b.stages.find((s) => s.stage.startsWith(prefix));
}

function breakdownSection(b: BreakdownResults): string[] {
  const prismaInsert = stage(b, 'INSERT verification via Prisma');
  const rawInsert = stage(b, 'same INSERT via pg, prepared');
  const prismaSelect = stage(b, 'nonce-use SELECT via Prisma');
  const rawSelect = stage(b, 'same SELECT via pg');
  const ethersCall = stage(b, 'authorizationState eth_call via');
  const apiInsert = stage(b, 'INSERT + nonce-use check');
  const apiCall = stage(b, 'authorizationState via RpcChainReader');
  const httpCall = stage(b, 'same eth_call via node:http');
  const pure = stage(b, 'VerificationService.verify: chain and database stubbed');
  const lines = [
    '### Where a verification\'s cost goes: `node bench/dist/verify-breakdown.js`',
    '',
    `Measured ${b.startedAt}${b.versions?.commit ? ` at commit ${b.versions.commit}` : ''}.`,
    '',
    'Each stage of verification driven alone, in-process, with the facilitator\'s compiled packages (synchronous stages on one core; the others with ' +
      `${b.stages.find((s) => s.concurrency > 1)?.concurrency ?? ''} operations in flight). CPU is per operation (per row or call for the batched lines).`,
    '',
    ...header(['stage', 'in flight', 'ops/s, one process', 'p50 ms', 'Node CPU µs/op', 'Postgres µs/op', 'anvil µs/op']),
    ...b.stages.map((s) => row([s.stage, s.concurrency, n(s.perSecond), s.p50Ms === undefined ? '' : n(s.p50Ms, 2), n(s.cpuUsPerOp.node, 1), s.cpuUsPerOp.postgres === undefined ? '' : n(s.cpuUsPerOp.postgres, 1), s.cpuUsPerOp.anvil === undefined ? '' : n(s.cpuUsPerOp.anvil, 1)])),
    '',
    `HTTP shell alone (\`POST /v1/verify\` with \`{}\`, answered 400 by schema validation; ${b.httpShell.apiProcesses} API processes, ${b.httpShell.connections} connections): ` +
      `${n(b.httpShell.answersPerSecond)} answers/s, ${n(b.httpShell.apiCpuUsPerRequest)} µs of API CPU and ${n(b.httpShell.loadGeneratorCpuUsPerRequest)} µs of load-generator CPU per request.`,
    '',
  ];
  if (prismaInsert && rawInsert && prismaSelect && rawSelect && ethersCall && httpCall && pure) {
    lines.push(
      'Reading it:',
      '',
      `- The two Prisma queries of a verification cost ${n(prismaInsert.cpuUsPerOp.node + prismaSelect.cpuUsPerOp.node)} µs of Node CPU; the same SQL through \`pg\` with prepared statements costs ${n(rawInsert.cpuUsPerOp.node + rawSelect.cpuUsPerOp.node)} µs, ` +
        `and Postgres itself spends ${n((prismaInsert.cpuUsPerOp.postgres ?? 0) + (prismaSelect.cpuUsPerOp.postgres ?? 0))} µs against ${n((rawInsert.cpuUsPerOp.postgres ?? 0) + (rawSelect.cpuUsPerOp.postgres ?? 0))} µs.`,
      `- The on-chain \`authorizationState\` read costs ${n(ethersCall.cpuUsPerOp.node)} µs of Node CPU through an ethers provider and waits ${n(ethersCall.p50Ms, 1)} ms (p50; ethers holds calls up to 10 ms to batch them); over a keep-alive \`node:http\` agent it is ${n(httpCall.cpuUsPerOp.node)} µs and ${n(httpCall.p50Ms, 1)} ms.`,
      ...(apiInsert && apiCall
        ? [
            `- What the API does now: \`VerificationRepository.createCheckingNonce\` stores the row and checks the nonce in the same statement (${n(apiInsert.cpuUsPerOp.node)} µs Node, ${n(apiInsert.cpuUsPerOp.postgres ?? 0)} µs Postgres), ` +
              `and \`authorizationState\` goes through the lean batching JSON-RPC client (${n(apiCall.cpuUsPerOp.node)} µs Node, ${n(apiCall.cpuUsPerOp.anvil ?? 0)} µs anvil, p50 ${n(apiCall.p50Ms, 1)} ms).`,
          ]
        : []),
      `- Everything that is not I/O — parsing, schema, hashing, signature recovery, checks — is ${n(pure.cpuUsPerOp.node)} µs per verification (${n(pure.perSecond)}/s on one process).`,
      '',
    );
  }
  return lines;
}

function settleSection(r: SettleResults): string[] {
  const s = r.settings;
  const lines = [
    '## Settle, sequential path (SETTLEMENT_MODE=sequential): `npm run bench:settle`',
    '',
    `Measured ${r.startedAt}${r.versions?.commit ? ` at commit ${r.versions.commit}` : ''}.`,
    '',
    `For each scenario: a fresh anvil with Circle's USDC (automine, or \`--block-time 1\`), a fresh database, the compiled API (API_PROCESSES=${s.apiProcesses}) and ${s.workerProcesses} compiled worker process(es) (LOG_LEVEL=${s.workerLogLevel}, SETTLEMENT_CONCURRENCY ${s.workerSettlementConcurrency}, CONFIRMATIONS ${s.confirmations}), ` +
      'RELAYER_PRIVATE_KEYS with 1 or 3 keys. Payments are verified first (not timed); ' +
      `${s.warmupCount} settlements warm each fresh stack up (not counted); the rest are settled with Form B \`POST /v1/settle\`, which answers \`pending\` at once. ` +
      'Latency runs from just before the settle request (client clock) to the worker\'s `settled` transition row in Postgres (same machine clock); no status polling loads the API. ' +
      'Requests are sent by autocannon. ' +
      `**steady**: an open loop offering ${s.steadyRatePerSecond} settlements/s for ${s.steadySeconds} s (overallRate, spread evenly over each second by staggered autocannon instances; latency with little queueing). ` +
      `**burst**: ${s.burstCount} settle requests with ${s.burstConcurrency} in flight (capacity: settled/s from the first request to the last \`settled\`; its latency is mostly queueing).`,
    '',
    ...header(['scenario', 'phase', 'settled/s', 'p50 ms', 'p95 ms', 'p99 ms', 'settled', 'failed', 'unfinished', 'settle requests refused']),
  ];
  for (const sc of r.scenarios) {
    for (const [phase, p] of [['steady', sc.steady], ['burst', sc.burst]] as const) {
      lines.push(row([sc.scenario, phase, n(p.perSecond, 1), n(p.latencyMs.p50), n(p.latencyMs.p95), n(p.latencyMs.p99), p.settled, p.failed, p.unfinished, p.rejected]));
    }
  }
  const busiest = Math.max(0, ...r.scenarios.flatMap((sc) => [sc.steady.cpu.cores.other ?? 0, sc.burst.cpu.cores.other ?? 0]));
  lines.push(
    '',
    ...interference(busiest),
    ...(r.scenarios.some((sc) => (sc.attempts ?? 1) > 1)
      ? [`- Scenarios repeated because other work on the machine disturbed them: ${r.scenarios.filter((sc) => (sc.attempts ?? 1) > 1).map((sc) => `${sc.scenario} (${sc.attempts} runs)`).join(', ')}; the last run is reported.`]
      : []),
    `- Automine, burst, ≥ ${r.targets.automineMinPerSecond} settlements/s: ${verdict(r.targets.automineMet)}.`,
    `- 1 s blocks, steady, p50 ≤ 2 blocks + 0.5 s (${n(r.targets.blockTimeP50MaxMs)} ms): ${verdict(r.targets.blockTimeMet)}.`,
    '',
    'Median time in each part of a settlement (ms): request → worker picks it up (`check_allowance`), allowance check, fee `transferFrom` mined, transfer submitted, transfer mined (`settled`):',
    '',
    ...header(['scenario', 'phase', 'to pick-up', 'allowance', 'fee transfer', 'submit transfer', 'transfer mined', 'CPU cores (worker / api / postgres / anvil)']),
  );
  for (const sc of r.scenarios) {
    for (const [phase, p] of [['steady', sc.steady], ['burst', sc.burst]] as const) {
      const m = p.medianStagesMs;
      const c = p.cpu.cores;
      lines.push(row([sc.scenario, phase, n(m.toPickup), n(m.checkAllowance), n(m.feeTransfer), n(m.submitTransfer), n(m.transferConfirmed), `${c.worker ?? '–'} / ${c.api ?? '–'} / ${c.postgres ?? '–'} / ${c.anvil ?? '–'}`]));
    }
  }
  lines.push('');
  const withRss = r.scenarios.filter((sc) => sc.peakRss);
  if (withRss.length > 0) {
    lines.push('Peak RSS over each scenario (warm-up, steady and burst), MiB:', '', ...header(['scenario', 'API (primary + cluster workers)', 'worker']));
    for (const sc of withRss) lines.push(row([sc.scenario, sc.peakRss!.api.totalMiB, sc.peakRss!.workers.map((w) => w.totalMiB).join(', ')]));
    lines.push('');
  }
  return lines;
}

export function renderBenchmarks(r: AllResults): string {
  const first = r.verify ?? r.settle ?? r.mixed ?? r.settleCurve ?? r.webhooks ?? r.paid ?? r.settleGas;
  const lines = [
    '# Benchmarks',
    '',
    'Generated by `npm run bench` (`bench/src/run-all.ts`) from `bench/results/*.json` (all of them together in `BENCHMARKS.json`); do not edit by hand. ' +
      '`npm run bench:verify`, `bench:settle`, `bench:settle-curve`, `bench:capacity`, `bench:webhooks`, `bench:mixed`, `bench:paid`, `bench:gas` and `bench:status` run one part. Durations and sizes can be changed with the `BENCH_*` variables listed in `bench/README.md`; ' +
      'set `BENCH_CPU_PROF_DIR=<dir>` to make the API and worker write V8 CPU profiles, then `node bench/dist/profile-summary.js <dir>`.',
    '',
    ...(first ? machineSection(first) : []),
    ...(r.verify ? verifySection(r.verify) : ['## Verify', '', 'not measured', '']),
    ...(r.verifyBreakdown ? breakdownSection(r.verifyBreakdown) : []),
    ...(r.settle ? settleSection(r.settle) : ['## Settle', '', 'not measured', '']),
    ...(r.settleCurve ? curveSection(r.settleCurve) : ['## Settlement latency against offered load', '', 'not measured', '']),
    ...(r.capacity ? capacitySection(r.capacity) : ['## Capacity on real block times', '', 'not measured', '']),
    ...(r.webhooks ? webhookSection(r.webhooks, r.settle) : ['## Webhooks', '', 'not measured', '']),
    ...(r.mixed ? mixedSection(r.mixed, r.settle) : ['## Mixed verify + settle', '', 'not measured', '']),
    ...(r.paid ? paidSection(r.paid) : ['## Paid requests through the x402 middleware', '', 'not measured', '']),
    ...(r.custody ? custodySection(r.custody) : ['## Relayer keys in the environment, in KMS and in an HSM', '', 'not measured', '']),
    ...(r.settleGas ? gasSection(r.settleGas) : ['## Gas per settlement', '', 'not measured', '']),
    ...(r.status ? statusSection(r.status) : ['## Status page under load', '', 'not measured', '']),
  ];
  return lines.join('\n');
}
