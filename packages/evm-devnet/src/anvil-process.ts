import { spawn, type ChildProcess } from 'node:child_process';
import { waitForRpc } from '@facilitator/evm-chain';
import { guardChild, type Guard } from './orphan-guard';

const BASE_SEPOLIA_CHAIN_ID = 84532;

export interface AnvilOptions {
  /** TCP port on 127.0.0.1; 0 or absent lets the OS pick a free one (no race between parallel tests). */
  port?: number;
  /** Address to listen on; default 127.0.0.1. A container serving other containers needs 0.0.0.0. */
  host?: string;
  /** Default 84532 (Base Sepolia). */
  chainId?: number;
  /** Seconds between blocks; absent means a block per transaction (automine). Fractions are allowed. */
  blockTime?: number;
  mnemonic?: string;
  /** How many mnemonic accounts anvil prefunds. */
  accounts?: number;
  /** ETH given to each prefunded account. */
  balanceEth?: number;
  startupTimeoutMs?: number;
  /** Passed through to anvil as is. */
  extraArgs?: string[];
}

export interface AnvilProcess {
  readonly pid: number;
  readonly port: number;
  readonly rpcUrl: string;
  readonly chainId: number;
  /** Resolves when anvil has exited, whoever stopped it. */
  readonly exited: Promise<void>;
  /** The last lines anvil printed, for error messages. */
  recentOutput(): string;
  /** Stops anvil and waits until it has exited; safe to call twice. */
  stop(): Promise<void>;
}

const HOST = '127.0.0.1';
const OUTPUT_TAIL_CHARS = 4_000;
const KILL_GRACE_MS = 2_000;

function anvilBinaryPath(): string {
  // The @foundry-rs/anvil wrapper script would stand between us and anvil's pid, so run the binary itself.
  try {
    return require.resolve('@foundry-rs/anvil-linux-amd64/bin/anvil');
  } catch (error) {
    throw new Error(
      `anvil binary not found: @foundry-rs/anvil installs it only for linux x64 here (${process.platform} ${process.arch})`,
      { cause: error },
    );
  }
}

function anvilArgs(options: AnvilOptions): string[] {
  const args = ['--host', options.host ?? HOST, '--port', String(options.port ?? 0)];
  args.push('--chain-id', String(options.chainId ?? BASE_SEPOLIA_CHAIN_ID));
  if (options.blockTime !== undefined) args.push('--block-time', String(options.blockTime));
  if (options.mnemonic !== undefined) args.push('--mnemonic', options.mnemonic);
  if (options.accounts !== undefined) args.push('--accounts', String(options.accounts));
  if (options.balanceEth !== undefined) args.push('--balance', String(options.balanceEth));
  return args.concat(options.extraArgs ?? []);
}

export async function startAnvil(options: AnvilOptions = {}): Promise<AnvilProcess> {
  const chainId = options.chainId ?? BASE_SEPOLIA_CHAIN_ID;
  const child = spawn(anvilBinaryPath(), anvilArgs(options), { stdio: ['ignore', 'pipe', 'pipe'] });
  child.on('error', () => {}); // spawn and kill failures surface through 'exit' or the startup timeout
  const guard = guardChild(child);
  const output = new OutputTail(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = stopOnce(child, guard, exited);
  try {
    const port = await listeningPort(child, output, options.startupTimeoutMs ?? 10_000);
    const rpcUrl = `http://${HOST}:${port}`;
    const reported = await waitForRpc(rpcUrl, 5_000);
    if (reported !== chainId) throw new Error(`anvil reports chain id ${reported}, expected ${chainId}`);
    return { pid: child.pid!, port, rpcUrl, chainId, exited, recentOutput: () => output.text, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Anvil prints `Listening on 127.0.0.1:<port>` once bound, which is how a port-0 start learns its port. */
function listeningPort(child: ChildProcess, output: OutputTail, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const fail = (reason: string) => {
      cleanup();
      reject(new Error(`anvil did not start: ${reason}\n${output.text}`));
    };
    const onOutput = () => {
      const match = /Listening on [\d.]+:(\d+)/.exec(output.text);
      if (!match) return;
      cleanup();
      resolve(Number(match[1]));
    };
    // 'close', not 'exit': it comes once anvil's output has been read to its end, so the error carries its
    // last words ('exit' can come first, and under load a failure was reported without them)
    const onExit = (code: number | null, signal: string | null) => fail(`exited (code ${code}, signal ${signal})`);
    const onError = (error: Error) => fail(error.message);
    const timer = setTimeout(() => fail(`no "Listening on" line within ${timeoutMs} ms`), timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout!.off('data', onOutput);
      child.off('close', onExit);
      child.off('error', onError);
    };
    child.stdout!.on('data', onOutput);
    child.once('close', onExit);
    child.once('error', onError);
  });
}

/** Keeps only the tail of anvil's output: it logs every request, and the pipes must be drained anyway. */
class OutputTail {
  text = '';
  constructor(child: ChildProcess) {
    const append = (chunk: Buffer) => {
      this.text = (this.text + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    };
    child.stdout!.on('data', append);
    child.stderr!.on('data', append);
  }
}

function stopOnce(child: ChildProcess, guard: Guard, exited: Promise<void>): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      guard.release();
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        child.kill('SIGTERM');
        const escalate = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
        await exited;
        clearTimeout(escalate);
      }
    })();
    return stopping;
  };
}
