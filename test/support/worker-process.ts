// Runs the compiled worker app as its own process, as production does, so tests can SIGKILL it.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { assertBuildIsCurrent } from './compiled-apps';

const ROOT = path.resolve(__dirname, '../..');
export const WORKER_MAIN = path.join(ROOT, 'apps/worker/dist/main.js');

export interface WorkerProcess {
  child: ChildProcess;
  /** every line the worker wrote */
  lines: string[];
  /** resolves when it exits */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Settings that make crash recovery quick in tests (the production defaults are seconds longer). */
export const FAST_RECOVERY_ENV = {
  WORKER_LOCK_DURATION_MS: '2000',
  WORKER_STALLED_INTERVAL_MS: '1000',
};

export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  assertBuildIsCurrent(WORKER_MAIN);
  const child = spawn(process.execPath, [WORKER_MAIN], {
    // info level: the start-up line is how we know it is ready
    env: { PATH: process.env.PATH ?? '', ...FAST_RECOVERY_ENV, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`worker did not start:\n${lines.join('\n')}`));
    }, 15_000);
    const check = () => {
      if (lines.some((l) => l.includes('"worker started"'))) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code} before starting:\n${lines.join('\n')}`));
    });
  });
  return {
    child,
    lines,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
