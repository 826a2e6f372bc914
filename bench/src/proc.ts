// Linux /proc sampling: memory of the API processes, and which process used the two cores during a run.
// On a 2-core machine the load generator, Postgres and anvil compete with the API, so where the CPU went
// is part of the result, not a detail.
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const CLOCK_TICKS = 100; // USER_HZ on Linux x86-64; /proc/<pid>/stat counts in these

interface ProcStat {
  pid: number;
  comm: string;
  ppid: number;
  /** user + system CPU, in ticks */
  ticks: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may contain spaces and parentheses: split after the last ')'
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const fields = text.slice(close + 2).split(' ');
    return { pid, comm, ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined; // exited meanwhile
  }
}

function allStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.push(stat);
  }
  return stats;
}

/** The pid and every descendant of it, not descending into `stopAt` (roots of other groups). */
export function processTree(root: number, stats: ProcStat[] = allStats(), stopAt: ReadonlySet<number> = new Set()): number[] {
  const children = new Map<number, number[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s.pid]);
  const tree: number[] = [];
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift()!;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []).filter((child) => !stopAt.has(child)));
  }
  return tree;
}

function rssKiB(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

export interface RssPeak {
  /** highest sum over the whole process tree at one sample */
  totalMiB: number;
  /** highest RSS of each process seen */
  perProcessMiB: number[];
}

/** Samples the RSS of a process tree (e.g. the API cluster primary and its workers) until stopped. */
export function sampleRss(root: number, intervalMs = 250): { stop(): RssPeak } {
  const peaks = new Map<number, number>();
  let peakTotal = 0;
  const sample = () => {
    let total = 0;
    for (const pid of processTree(root)) {
      const kib = rssKiB(pid);
      total += kib;
      peaks.set(pid, Math.max(peaks.get(pid) ?? 0, kib));
    }
    peakTotal = Math.max(peakTotal, total);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const mib = (kib: number) => Number((kib / 1024).toFixed(1));
      return { totalMiB: mib(peakTotal), perProcessMiB: [...peaks.values()].map(mib) };
    },
  };
}

export interface CpuGroups {
  /** named process trees, e.g. { api: apiPid, anvil: anvilPid } */
  trees: Record<string, number>;
  /**
   * pids charged to `other` whatever their name: the Postgres backends of other databases on the shared
   * server (watchPostgresBackends), so `postgres` is this run's backends and the server's own processes
   */
  foreign?: () => ReadonlySet<number>;
}

/** CPU seconds per group between two snapshots, and the machine's busy share from /proc/stat. */
export interface CpuUsage {
  seconds: number;
  /** cores used on average by each group (1.0 = one core busy all the time) */
  cores: Record<string, number>;
  /** share of all cores that were busy (0..1) */
  machineBusy: number;
  /** CPU seconds each group used (unrounded: per-operation figures divide these) */
  cpuSeconds?: Record<string, number>;
}

function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = values[3] + (values[4] ?? 0); // idle + iowait
  const total = values.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** Which group each live process belongs to right now, with its CPU ticks so far. */
function snapshot(groups: CpuGroups): Map<number, { group: string; ticks: number }> {
  const stats = allStats();
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  const seen = new Map<number, { group: string; ticks: number }>();
  // the benchmark's own tree contains the apps it started: each app is charged to its own group
  const roots = new Set(Object.values(groups.trees));
  for (const [group, root] of Object.entries(groups.trees)) {
    for (const pid of processTree(root, stats, roots)) {
      const s = byPid.get(pid);
      if (s && !seen.has(pid)) seen.set(pid, { group, ticks: s.ticks });
    }
  }
  const foreign = groups.foreign?.();
  for (const s of stats) {
    if (seen.has(s.pid)) continue;
    const group = foreign?.has(s.pid) ? 'other' : s.comm.startsWith('postgres') ? 'postgres' : s.comm.startsWith('redis') ? 'redis' : 'other';
    seen.set(s.pid, { group, ticks: s.ticks });
  }
  return seen;
}

/**
 * Per-process deltas, sampled every half second: a process that exits during the run (a pooled Postgres
 * backend closed when idle) keeps the CPU it used up to its last sample instead of vanishing from a sum.
 */
export function startCpuMeter(groups: CpuGroups): { stop(): CpuUsage } {
  const startedAt = performance.now();
  const first = snapshot(groups);
  const last = new Map(first);
  const sample = () => {
    for (const [pid, entry] of snapshot(groups)) last.set(pid, entry);
  };
  const timer = setInterval(sample, 500);
  const machineBefore = machineTicks();
  return {
    stop() {
      clearInterval(timer);
      sample();
      const seconds = (performance.now() - startedAt) / 1000;
      const machineAfter = machineTicks();
      const ticks = new Map<string, number>();
      for (const [pid, { group, ticks: t }] of last) {
        // a process that started during the interval counts from zero
        const used = t - (first.get(pid)?.ticks ?? 0);
        ticks.set(group, (ticks.get(group) ?? 0) + Math.max(0, used));
      }
      const cores: Record<string, number> = {};
      const cpuSeconds: Record<string, number> = {};
      for (const [group, t] of ticks) {
        cores[group] = Number((t / CLOCK_TICKS / seconds).toFixed(2));
        cpuSeconds[group] = t / CLOCK_TICKS;
      }
      const busy = machineAfter.busy - machineBefore.busy;
      const total = machineAfter.total - machineBefore.total;
      return { seconds: Number(seconds.toFixed(1)), cores, machineBusy: Number((total > 0 ? busy / total : 0).toFixed(2)), cpuSeconds };
    },
  };
}

/** BENCH_QUIET_WAIT_SECONDS (default 90): how long a benchmark waits for a quiet machine before measuring anyway. */
function quietWaitMs(): number {
  const raw = Number(process.env.BENCH_QUIET_WAIT_SECONDS ?? 90);
  return Number.isFinite(raw) && raw >= 0 ? raw * 1000 : 90_000;
}

/**
 * Waits until the machine is nearly idle (another engineer's test run, a build), at most `timeoutMs`,
 * and returns how busy it still was: a benchmark started on a busy 2-core machine measures the neighbour.
 */
export async function waitForQuietMachine(timeoutMs = quietWaitMs(), maxBusy = 0.15): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = machineTicks();
    await sleep(1_000);
    const after = machineTicks();
    const busy = (after.busy - before.busy) / Math.max(1, after.total - before.total);
    if (busy <= maxBusy || Date.now() > deadline) return Number(busy.toFixed(2));
  }
}

/**
 * The Postgres server is shared (other databases, other people's tests): this polls pg_stat_activity every
 * 250 ms for the backends serving any database but `databases` (client backends and autovacuum workers of
 * other databases), for startCpuMeter's `foreign`. The server's own processes (checkpointer, WAL writer,
 * background writer: no database) stay `postgres`. A connection of another database opened and closed
 * between two polls is missed and charged to `postgres`.
 */
export async function watchPostgresBackends(adminUrl: string, databases: readonly string[]): Promise<{ foreign(): ReadonlySet<number>; stop(): Promise<void> }> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  let foreign = new Set<number>();
  let stopped = false;
  const poll = async () => {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname IS NOT NULL AND NOT (datname = ANY($1))', [databases]);
    foreign = new Set(rows.map((r) => r.pid));
  };
  await poll();
  const loop = (async () => {
    while (!stopped) {
      await sleep(250);
      if (!stopped) await poll().catch(() => undefined);
    }
  })();
  return {
    foreign: () => foreign,
    async stop() {
      stopped = true;
      await loop;
      await client.end().catch(() => undefined);
    },
  };
}
