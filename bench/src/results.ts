// Where results go, and small helpers shared by the benchmark entry points.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './stack';

/**
 * BENCH_RESULTS_DIR sends a trial run's results elsewhere, so it cannot overwrite the published ones; the
 * BENCHMARKS.md and .json of such a run go there too instead of the repository root.
 */
export const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ? path.resolve(process.env.BENCH_RESULTS_DIR) : path.join(ROOT, 'bench/results');
export const REPORT_DIR = process.env.BENCH_RESULTS_DIR ? RESULTS_DIR : ROOT;

export function writeResult(name: string, data: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.json`);
  writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
  return file;
}

/** A non-JSON result file (a plot) beside the JSON results. */
export function writeResultFile(fileName: string, text: string): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, fileName);
  writeFileSync(file, text);
  return file;
}

export function readResult<T>(name: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path.join(RESULTS_DIR, `${name}.json`), 'utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Positive number from the environment, so a run can be shortened or lengthened without editing code. */
export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${JSON.stringify(raw)}`);
  return value;
}

/** Seconds between anvil blocks from the environment: a number, or "automine" (undefined: a block per transaction). */
export function blockTimeFromEnv(name: string, fallback: number | undefined): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  return raw === 'automine' ? undefined : envNumber(name, 0);
}

export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** Plain-text table for the console. */
export function table(rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = rows.map((row) => row.map(String));
  const widths = cells[0].map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells.map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ')).join('\n');
}

/**
 * The machine is shared with other work (another engineer's test runs). A measured run during which other
 * processes used more than this many cores is done again, after waiting for quiet, up to `retries` times.
 */
export function interferencePolicy(): { maxOtherCores: number; retries: number } {
  return { maxOtherCores: envNumber('BENCH_MAX_INTERFERENCE_CORES', 0.25), retries: Math.floor(envNumber('BENCH_RETRIES', 2)) };
}

/** The command-line entry of one benchmark: runs it, stores and prints its result; exit code 1 when it fails. */
export function runBenchmarkMain<T>(name: string, run: () => Promise<T>, print: (results: T) => void, alsoWritten: string[] = []): void {
  run().then(
    (results) => {
      const file = writeResult(name, results);
      print(results);
      process.stdout.write(`written ${[file, ...alsoWritten].join(' and ')}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`${name} benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
