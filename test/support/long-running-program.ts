import { spawn, type ChildProcess } from 'node:child_process';
import { until } from './until';

/** A node program that keeps running (a server): its output so far, and a way to stop it. */
export interface LongRunningProgram {
  readonly child: ChildProcess;
  output(): string;
  /** Waits until the program has printed `text` (on stdout or stderr); fails early if it exits. */
  printed(text: string, timeoutMs?: number): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

export function startNodeProgram(args: string[], env: NodeJS.ProcessEnv): LongRunningProgram {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    output: () => output,
    printed: async (text, timeoutMs = 60_000) => {
      await until(
        `${args[0]} to print ${JSON.stringify(text)}`,
        async () => {
          if (output.includes(text)) return true;
          if (!running()) throw new Error(`${args[0]} exited (${child.exitCode ?? child.signalCode}) before printing ${JSON.stringify(text)}:\n${output.slice(-4000)}`);
          return false;
        },
        timeoutMs,
        async () => output.slice(-4000),
      );
    },
    stop: async (graceMs = 15_000) => {
      if (!running()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
