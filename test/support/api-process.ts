// Runs the compiled API app as its own process, as production does, so a test can watch it: whether it is
// still alive, and how much memory (RSS) it holds.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './ports';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertBuildIsCurrent } from './compiled-apps';

const ROOT = path.resolve(__dirname, '../..');
export const API_MAIN = path.join(ROOT, 'apps/api/dist/main.js');

export interface ApiProcess {
  child: ChildProcess;
  pid: number;
  url: string;
  /** every line the process wrote (stdout and stderr) */
  lines: string[];
  /** resolves with the exit code (or signal name) when it exits */
  exited: Promise<number | string | null>;
  alive(): boolean;
  /** resident set size in KiB, from /proc/<pid>/status (VmRSS) */
  rssKiB(): number;
  /**
   * Only when started with `inspect`: forces a full garbage collection in the process (through the
   * inspector protocol, the process itself is not changed) and returns its process.memoryUsage() after it.
   */
  collectGarbage(): Promise<NodeJS.MemoryUsage>;
  stop(signal?: NodeJS.Signals): Promise<number | string | null>;
}

export function rssKiBOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]);
}

export interface ApiProcessOptions {
  /** extra node flags */
  nodeArgs?: string[];
  /** open the inspector on a free loopback port, so collectGarbage() can force a full GC */
  inspect?: boolean;
}

// ws comes with ethers (a dependency of the app); only the few members used here are typed.
interface InspectorSocket {
  on(event: 'open' | 'error' | 'message' | 'close', listener: (data?: unknown) => void): void;
  send(text: string): void;
  close(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- ws ships no types of its own
const WebSocketClient = require('ws') as new (url: string) => InspectorSocket;

/** Sends inspector protocol commands one after another and returns the last result. */
async function inspectorCall(wsUrl: string, commands: Array<{ method: string; params?: object }>): Promise<unknown> {
  const socket = new WebSocketClient(wsUrl);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.on('open', () => resolve());
      socket.on('error', (err) => reject(err));
    });
    const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = message.id === undefined ? undefined : pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id!);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
    let result: unknown;
    for (const [i, command] of commands.entries()) {
      result = await new Promise((resolve, reject) => {
        pending.set(i + 1, { resolve, reject });
        socket.send(JSON.stringify({ id: i + 1, ...command }));
      });
    }
    return result;
  } finally {
    socket.close();
  }
}

/**
 * Starts `node apps/api/dist/main.js` with exactly `env` (plus PATH, HOST and a free PORT) and waits until
 * GET /healthz answers. Set API_PROCESSES=1 in `env` so the pid is the process that serves requests.
 */
export async function startApiProcess(env: Record<string, string>, options: ApiProcessOptions = {}): Promise<ApiProcess> {
  assertBuildIsCurrent(API_MAIN);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const nodeArgs = [...(options.nodeArgs ?? []), ...(options.inspect ? ['--inspect=127.0.0.1:0'] : [])];
  const child = spawn(process.execPath, [...nodeArgs, API_MAIN], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    if (lines.length > 5_000) lines.splice(0, lines.length - 5_000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let exitedWith: number | string | null | undefined;
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('exit', (code, signal) => {
      exitedWith = code ?? signal;
      resolve(exitedWith);
    }),
  );

  const deadline = Date.now() + 20_000;
  for (;;) {
    if (exitedWith !== undefined) throw new Error(`api exited with ${exitedWith} before answering:\n${lines.join('\n')}`);
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`api did not answer /healthz within 20 s:\n${lines.join('\n')}`);
    }
    await sleep(100);
  }

  const inspectorUrl = options.inspect ? lines.map((l) => /Debugger listening on (ws:\/\/\S+)/.exec(l)?.[1]).find(Boolean) : undefined;
  if (options.inspect && !inspectorUrl) throw new Error(`api started without an inspector URL:\n${lines.join('\n')}`);
  const alive = () => exitedWith === undefined && child.exitCode === null && child.signalCode === null;
  return {
    child,
    pid: child.pid!,
    url,
    lines,
    exited,
    alive,
    rssKiB: () => rssKiBOf(child.pid!),
    async collectGarbage() {
      if (!inspectorUrl) throw new Error('collectGarbage() needs startApiProcess(env, { inspect: true })');
      const result = (await inspectorCall(inspectorUrl, [
        { method: 'HeapProfiler.collectGarbage' },
        { method: 'HeapProfiler.collectGarbage' },
        { method: 'Runtime.evaluate', params: { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true } },
      ])) as { result: { value: string } };
      return JSON.parse(result.result.value) as NodeJS.MemoryUsage;
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (alive()) child.kill(signal);
      const timer = setTimeout(() => alive() && child.kill('SIGKILL'), 12_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** What an API process logged about one request, besides its access line (the error handler logs "unhandled error" before a 500). */
export function apiLogAbout(api: Pick<ApiProcess, 'lines'>, requestId: string | undefined): string {
  const lines = api.lines.filter((l) => requestId !== undefined && l.includes(requestId) && !l.includes('"message":"request"'));
  return lines.join(' ').slice(0, 400) || 'nothing';
}
