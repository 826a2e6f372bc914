// A Redis of the test's own, with AOF persistence as production runs it, that the test may restart.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './ports';
import { setTimeout as sleep } from 'node:timers/promises';

export interface PrivateRedis {
  url: string;
  port: number;
  /** SIGTERM (Redis flushes its AOF), wait, then start again on the same port and data directory */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}


export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'redis-aof-'));
  let child: ChildProcess;
  const launch = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--appendonly', 'yes', '--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction', '--save', '', '--dir', dir],
      { stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      if (spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG') return;
      await sleep(50);
    }
    throw new Error('private redis did not start');
  };
  const halt = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async restart(downMs = 2_000) {
      await halt('SIGTERM');
      await sleep(downMs);
      await launch();
    },
    async stop() {
      await halt('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
