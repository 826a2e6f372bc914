// After a run, nothing a suite started may stay alive (an anvil, a browser, a Redis of a test's own): it
// would keep jest from exiting or linger on the machine. The global teardown names each one and stops it.
import { execFileSync } from 'node:child_process';

export interface ProcessEntry {
  pid: number;
  ppid: number;
  args: string;
}

/** Programs the suites start; jest's own workers (node) are not among them. */
const STARTED_BY_SUITES = /(^|\/)(anvil|chromium|chrome|chrome_crashpad_handler|redis-server|docker-compose)(\s|$)/;

export function processTable(): ProcessEntry[] {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
}

/** The processes below `root` in the process tree. */
export function descendantsOf(root: number, table: ProcessEntry[] = processTable()): ProcessEntry[] {
  const below: ProcessEntry[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        below.push(p);
        grew = true;
      }
    }
  }
  return below;
}

/** Stops what suites started and left running below this process; returns what it stopped, for the log. */
export function stopLeftoverProcesses(root = process.pid): ProcessEntry[] {
  let table: ProcessEntry[];
  try {
    table = processTable();
  } catch {
    return []; // no `ps` here: nothing to look at
  }
  const leftovers = descendantsOf(root, table).filter((p) => STARTED_BY_SUITES.test(p.args));
  for (const p of leftovers) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  return leftovers;
}
