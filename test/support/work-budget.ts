// The work budget's table (docs/work-budget.md, "## Budget"): counters (rows) × paths (columns) → the most
// of it one settlement may cost. test/work-budget.e2e.test.ts reads its numbers from there, the one place
// they are written, and compares what it measured with them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { PostgresTally, Tally } from './work-counters';

export const WORK_BUDGET_DOC = path.resolve(__dirname, '../../docs/work-budget.md');

/** counter -> path -> allowed per settlement */
export type BudgetTable = Map<string, Map<string, number>>;

/** The first table after the heading `heading` of a markdown document, as rows of cells (header first). */
export function tableAfter(markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start < 0) throw new Error(`no "${heading}" heading`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('#')) break;
    if (!line.trim().startsWith('|')) {
      if (rows.length > 0) break;
      continue;
    }
    const cells = line.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim().replace(/^`|`$/g, ''));
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
    rows.push(cells);
  }
  if (rows.length < 2) throw new Error(`no table under "${heading}"`);
  return rows;
}

export function readBudget(file = WORK_BUDGET_DOC): BudgetTable {
  const [header, ...rows] = tableAfter(readFileSync(file, 'utf8'), '## Budget');
  const paths = header.slice(1);
  const table: BudgetTable = new Map();
  for (const [counter, ...cells] of rows) {
    const row = new Map<string, number>();
    cells.forEach((cell, i) => {
      const n = Number(cell);
      if (cell === '' || !Number.isFinite(n)) throw new Error(`${path.relative(process.cwd(), file)}: "${counter}" for "${paths[i]}" is not a number: "${cell}"`);
      row.set(paths[i], n);
    });
    table.set(counter, row);
  }
  return table;
}

/** What one process of ours asked of each service during the measured phase. */
export interface ProcessWork {
  sql: PostgresTally;
  rpc: Tally;
  redis: Tally;
}

export interface MeasuredWork {
  settlements: number;
  api: ProcessWork;
  worker: ProcessWork;
  /** INFO commandstats of the dedicated Redis: every command it ran, scripts' included */
  redisServer: Tally;
}

/**
 * The API's reads of the progress of settlements that requests wait for (SettlementWaiter's poller, every
 * 20 ms while any request waits, and its last looks before a decision: settlementProgressReader). Their
 * number follows the time requests wait, not the settlements: a counter of their own.
 */
export const PROGRESS_READS = [/^SELECT \* FROM settlements WHERE id = ANY\(/, /^SELECT s\.id AS settlement_id, tx\.hash FROM unnest\(/];

/**
 * The worker's statements that run on a timer whatever the settlements: the discovery indexer's claim of
 * finished declarations (every 500 ms, issue 45). Counted apart: their number follows time.
 */
export const WORKER_POLLS = [/^WITH ready AS \( SELECT d\.settlement_id FROM discovery_declarations /];

function sum(tally: Tally, which: (key: string) => boolean): number {
  let n = 0;
  for (const [key, count] of tally.by) if (which(key)) n += count;
  return n;
}

const SIMULATION = /^(eth_call|eth_estimateGas|eth_simulateV1|eth_createAccessList|debug_.*|trace_.*)$/;

/** The counters of the budget table, as totals over the measured phase (divide by `settlements`). */
export function counters(work: MeasuredWork): Map<string, number> {
  const out = new Map<string, number>();
  const processes = [
    ['API', work.api],
    ['worker', work.worker],
  ] as const;
  const progressReads = sum(work.api.sql.statements, (sql) => PROGRESS_READS.some((r) => r.test(sql)));
  out.set('SQL statements, API', work.api.sql.statements.total - progressReads);
  out.set('SQL progress reads of waiting requests, API', progressReads);
  const polls = sum(work.worker.sql.statements, (sql) => WORKER_POLLS.some((r) => r.test(sql)));
  out.set('SQL statements, worker', work.worker.sql.statements.total - polls);
  out.set('SQL statements of timed polls, worker', polls);
  for (const [name, p] of processes) out.set(`Postgres connections opened, ${name}`, p.sql.connections);
  for (const [name, p] of processes) out.set(`RPC calls, ${name}`, p.rpc.total);
  for (const [name, p] of processes) {
    for (const [method, n] of [...p.rpc.by].sort(([a], [b]) => a.localeCompare(b))) out.set(`RPC ${method}, ${name}`, n);
  }
  let simulations = 0;
  for (const [, p] of processes) for (const [method, n] of p.rpc.by) if (SIMULATION.test(method)) simulations += n;
  out.set('chain simulations', simulations);
  for (const [name, p] of processes) out.set(`Redis commands, ${name}`, p.redis.total);
  out.set('Redis commands run by the server', work.redisServer.total);
  return out;
}

export interface Excess {
  counter: string;
  perSettlement: number;
  budget: number;
}

/** Every counter above its budget for `pathName` (a counter the table does not name has a budget of 0). */
export function overBudget(budget: BudgetTable, pathName: string, work: MeasuredWork): Excess[] {
  const excess: Excess[] = [];
  for (const [counter, total] of counters(work)) {
    const perSettlement = total / work.settlements;
    const allowed = budget.get(counter)?.get(pathName) ?? 0;
    // a thousandth of slack for the division's rounding only
    if (perSettlement > allowed + 1e-9) excess.push({ counter, perSettlement, budget: allowed });
  }
  return excess;
}

export const round2 = (n: number) => Math.round(n * 100) / 100;

export function describeExcess(pathName: string, settlements: number, list: Excess[]): string {
  return list
    .map((e) => {
      const over = e.perSettlement - e.budget;
      return `${pathName}: "${e.counter}" ${round2(e.perSettlement)} per settlement, budget ${e.budget}: ${round2(over)} over (${Math.round(over * settlements)} more over ${settlements} settlements)`;
    })
    .join('\n');
}

/** The busiest kinds of a tally, per settlement, one per line. */
export function breakdown(tally: Tally, settlements: number, limit = 40): string {
  return [...tally.by]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([key, n]) => `  ${round2(n / settlements).toFixed(2).padStart(6)}  ${key}`)
    .join('\n');
}

/** The measured figures as the budget table's shape (counters × paths), per settlement. */
export function measuredTable(measured: Map<string, MeasuredWork>, order: readonly string[]): string {
  const paths = order.filter((p) => measured.has(p));
  const rows = new Map<string, Map<string, number>>();
  for (const p of paths) {
    const work = measured.get(p)!;
    for (const [counter, total] of counters(work)) {
      if (!rows.has(counter)) rows.set(counter, new Map());
      rows.get(counter)!.set(p, total / work.settlements);
    }
  }
  const lines = [`| counter | ${paths.join(' | ')} |`, `|---|${paths.map(() => '---:').join('|')}|`];
  for (const [counter, byPath] of rows) lines.push(`| ${counter} | ${paths.map((p) => round2(byPath.get(p) ?? 0)).join(' | ')} |`);
  return lines.join('\n');
}
