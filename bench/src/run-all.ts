// `npm run bench`: every benchmark, each in a process of its own (a fresh heap, and a crash in one does not
// lose the others' results), then BENCHMARKS.md at the repository root from their JSON results.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderBenchmarks } from './report';
import { log, readResult } from './results';
import type { SettleResults } from './settle-bench';
import { ROOT } from './stack';
import type { BreakdownResults } from './verify-breakdown';
import type { VerifyResults } from './verify-bench';

const PARTS = [
  { script: 'verify-bench.js', result: 'verify' },
  // diagnostics for the verify figure; BENCH_SKIP_BREAKDOWN=1 leaves it out (about 50 s)
  { script: 'verify-breakdown.js', result: 'verify-breakdown', optional: 'BENCH_SKIP_BREAKDOWN' },
  { script: 'settle-bench.js', result: 'settle' },
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
  // BENCH_REPORT_ONLY=1: rewrite BENCHMARKS.md from the results already in bench/results
  const parts = process.env.BENCH_REPORT_ONLY ? [] : PARTS;
  for (const part of parts) {
    if (part.optional && process.env[part.optional]) continue;
    if (stopping) return 1;
    log(`running ${part.script}`);
    if ((await runPart(part.script)) !== 0) failed.push(part.script);
  }
  if (stopping) return 1;
  const verify = failed.includes('verify-bench.js') ? undefined : readResult<VerifyResults>('verify');
  const settle = failed.includes('settle-bench.js') ? undefined : readResult<SettleResults>('settle');
  const breakdown = failed.includes('verify-breakdown.js') || process.env.BENCH_SKIP_BREAKDOWN ? undefined : readResult<BreakdownResults>('verify-breakdown');
  const file = path.join(ROOT, 'BENCHMARKS.md');
  writeFileSync(file, renderBenchmarks(verify, settle, breakdown));
  log(`wrote ${file} after ${Math.round((Date.now() - started) / 1000)} s${failed.length ? `; failed: ${failed.join(', ')}` : ''}`);
  return failed.length === 0 ? 0 : 1;
}

main().then((code) => (process.exitCode = code));
