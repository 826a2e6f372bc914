import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';

/**
 * Makes sure a child process (anvil) dies with the process that started it, even when that process is
 * killed with SIGKILL or crashes (a jest worker past its timeout, a ^C'd test run):
 *
 * - a detached `sh` watchdog per child blocks reading a pipe whose only writer is this process; the
 *   kernel closes the pipe however this process ends, so `read` returns and the watchdog kills the child;
 * - an `exit` hook kills the children too, for machines without /bin/sh.
 *
 * No signal handlers are installed: they would change how the host process reacts to SIGINT/SIGTERM.
 */

const WATCHDOG_SCRIPT = 'read -r _; kill -9 "$1" 2>/dev/null';

const guarded = new Map<ChildProcess, ChildProcess | undefined>();
let exitHookInstalled = false;

export interface Guard {
  /** Stops guarding: call before stopping the child on purpose, so the watchdog cannot hit a reused pid. */
  release(): void;
}

export function guardChild(child: ChildProcess): Guard {
  if (child.pid === undefined) return { release() {} };
  installExitHook();
  guarded.set(child, startWatchdog(child.pid));
  const release = () => {
    const watchdog = guarded.get(child);
    guarded.delete(child);
    watchdog?.kill('SIGKILL');
  };
  child.once('exit', release);
  return { release };
}

function startWatchdog(pid: number): ChildProcess | undefined {
  try {
    const watchdog = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, 'anvil-watchdog', String(pid)], {
      // Its own process group, so a ^C or group kill aimed at us still leaves it alive to do its job.
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    watchdog.on('error', () => {}); // no /bin/sh: the exit hook remains
    // Neither the watchdog nor its pipe may keep this process alive.
    watchdog.unref();
    (watchdog.stdin as Socket | null)?.unref();
    return watchdog;
  } catch {
    return undefined;
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [child, watchdog] of guarded) {
      child.kill('SIGKILL');
      watchdog?.kill('SIGKILL');
    }
  });
}
