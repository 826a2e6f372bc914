// `npm run bench`: every benchmark, each in a process of its own (a fresh heap, and a crash in one does not
// lose the others' results), then BENCHMARKS.md and BENCHMARKS.json at the repository root from their
// JSON results.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderBenchmarks, type AllResults } from './report';
import { log, readResult, REPORT_DIR } from './results';

const PARTS: Array<{ script: string; result: string; key: keyof AllResults; optional?: string }> = [
  { script: 'verify-bench.js', result: 'verify', key: 'verify' },
  // diagnostics for the verify figure; BENCH_SKIP_BREAKDOWN=1 leaves it out (about 50 s)
  { script: 'verify-breakdown.js', result: 'verify-breakdown', key: 'verifyBreakdown', optional: 'BENCH_SKIP_BREAKDOWN' },
  { script: 'settle-bench.js', result: 'settle', key: 'settle' },
  { script: 'settle-curve.js', result: 'settle-curve', key: 'settleCurve' },
  { script: 'capacity-bench.js', result: 'capacity', key: 'capacity' },
  { script: 'webhook-bench.js', result: 'webhooks', key: 'webhooks' },
  { script: 'mixed-bench.js', result: 'mixed', key: 'mixed' },
  { script: 'paid-request-bench.js', result: 'paid-request', key: 'paid' },
  // relayer keys in the environment, in KMS (protocol server) and in an HSM (SoftHSM2) side by side
  { script: 'custody-bench.js', result: 'custody', key: 'custody' },
  { script: 'settle-gas-bench.js', result: 'settle-gas', key: 'settleGas' },
  { script: 'status-bench.js', result: 'status-page', key: 'status' },
];

/** Runs one part; a SIGINT/SIGTERM to us is passed on so the part can stop what it started. */
function runPart(script: string): Promise<number | null> {
  const child = spawn(process.execPath, [path.join(__dirname, script)], { stdio: 'inherit', env: process.env });
  const forward = (signal: NodeJS.Signals) => {
    stopping = true;
    child.kill(signal);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code);
    }),
  );
}

let stopping = false;

async function main(): Promise<number> {
  const started = Date.now();
  const failed: string[] = [];
  // BENCH_REPORT_ONLY=1: rewrite BENCHMARKS.md and .json from the results already in bench/results
  const parts = process.env.BENCH_REPORT_ONLY ? [] : PARTS;
  for (const part of parts) {
    if (part.optional && process.env[part.optional]) continue;
    if (stopping) return 1;
    log(`running ${part.script}`);
    if ((await runPart(part.script)) !== 0) failed.push(part.script);
  }
  if (stopping) return 1;
  // a failed or skipped part is left out rather than reported from an older run
  const results: AllResults = {};
  for (const part of PARTS) {
    if (failed.includes(part.script) || (part.optional && process.env[part.optional])) continue;
    const value = readResult<NonNullable<AllResults[typeof part.key]>>(part.result);
    if (value) (results as Record<string, unknown>)[part.key] = value;
  }
  const markdown = path.join(REPORT_DIR, 'BENCHMARKS.md');
  writeFileSync(markdown, renderBenchmarks(results));
  writeFileSync(path.join(REPORT_DIR, 'BENCHMARKS.json'), JSON.stringify({ generatedAt: new Date().toISOString(), ...results }, null, 2) + '\n');
  log(`wrote ${markdown} and BENCHMARKS.json after ${Math.round((Date.now() - started) / 1000)} s${failed.length ? `; failed: ${failed.join(', ')}` : ''}`);
  return failed.length === 0 ? 0 : 1;
}

main().then((code) => (process.exitCode = code));
