// The BENCHMARKS.md section of bench:status: the public status page and its JSON under load while
// settlements run.
import { header, interference, n, row } from './report-load';
import type { StatusResults, StatusRun } from './status-bench';

const verdict = (met: boolean) => (met ? '**met**' : '**missed**');

export function statusSection(r: StatusResults): string[] {
  const s = r.settings;
  const line = (p: StatusRun) =>
    row([`\`GET ${p.path}\``, `**${n(p.perSecond)}**`, n(p.latencyMs.p50, 1), n(p.latencyMs.p99, 1), n(p.requests), p.non2xx, p.errors + p.timeouts, n(p.apiCpuUsPerRequest), n(p.postgresCpuUsPerRequest), `${n(p.settle.perSecond, 1)} (${p.settle.settled} settled, ${p.settle.failed} failed)`]);
  const busiest = Math.max(r.json.cpu.cores.other ?? 0, r.page.cpu.cores.other ?? 0);
  return [
    '## Status page under load: `npm run bench:status`',
    '',
    `Measured ${r.startedAt}${r.versions?.commit ? ` at commit ${r.versions.commit}` : ''}.`,
    '',
    `autocannon GETs \`/status.json\` for ${n(r.json.seconds)} s, then the page \`/status\` for ${n(r.page.seconds)} s, with ${s.connections} connections (a closed loop: as fast as answers come), ` +
      `against the compiled API (API_PROCESSES=${s.apiProcesses}) while Form B settlements are offered at ${s.settleRatePerSecond}/s and settle through the worker (${s.blockTimeSeconds} s blocks, ${s.relayers} relayers). ` +
      `Each API process computes the figures once per STATUS_MAX_AGE_MS (${n(s.statusMaxAgeMs)} ms: the 5-minute window's aggregates, the waiting count and a base-fee read; the hour and the day every 60 s) and serves that one computation, serialized once, to every visitor; the page is a constant.`,
    '',
    ...header(['request', 'req/s', 'p50 ms', 'p99 ms', 'answered', 'non-2xx', 'errors', 'API CPU µs/req', 'Postgres CPU µs/req', 'settled/s meanwhile']),
    line(r.json),
    line(r.page),
    '',
    `- Target ≥ ${n(r.targets.perSecond)} requests/s with no error, while settlements run: JSON ${verdict(r.targets.jsonMet)}, page ${verdict(r.targets.pageMet)}.`,
    `- The figures moved under the load: the JSON read after the run showed ${r.settledShownAtEnd} settlements settled in its 5-minute window.`,
    '- CPU per request is all the CPU of the API processes (or Postgres) over the run divided by the status requests answered: the settlements running meanwhile are in it (they are most of the Postgres share; the status figures cost each API process three small queries per STATUS_MAX_AGE_MS).',
    `- CPU in cores, JSON run: ${Object.entries(r.json.cpu.cores).map(([k, v]) => `${k} ${v}`).join(', ')}; page run: ${Object.entries(r.page.cpu.cores).map(([k, v]) => `${k} ${v}`).join(', ')}. The load generator (bench) shares the two cores.`,
    ...interference(busiest),
    '',
  ];
}
