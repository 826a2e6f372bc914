// The reference facilitator bench:paid compares ours with: @x402/core's `x402Facilitator` with
// @x402/evm's exact scheme registered (`registerExactEvmScheme`) and its upto scheme (`UptoEvmScheme`,
// registered on the network the same way), a viem wallet client on one key, behind
// the standard facilitator HTTP API (POST /verify, POST /settle, GET /supported) — what x402's own
// facilitator examples run. No fee, no database, no queue: the payer's `transferWithAuthorization` (or the
// exact or upto Permit2 proxy's `settle`) sent by the facilitator's key and waited for before /settle answers.
//
// Run as a child process (reference-facilitator-main.ts, started by `startReferenceFacilitator`), so it has
// an event loop of its own like our API.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { guardChild } from '@facilitator/evm-devnet';
import { watchProblems, type LogProblems } from './app-logs';
import { cleanupOnSignal, freePort } from './stack';

export interface ReferenceFacilitator {
  /** the facilitator URL for HTTPFacilitatorClient (the routes are /verify, /settle, /supported under it) */
  url: string;
  pid: number;
  problems(): LogProblems;
  stop(): Promise<void>;
}

export interface ReferenceOptions {
  rpcUrl: string;
  /** the key the facilitator sends settlements from */
  privateKey: string;
  /** viem's receipt polling interval (its default for Base Sepolia is 1 s; our worker polls every 100 ms) */
  pollingIntervalMs: number;
}

/** Starts the reference facilitator in a child process and resolves once /supported answers. */
export async function startReferenceFacilitator(options: ReferenceOptions): Promise<ReferenceFacilitator> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(__dirname, 'reference-facilitator-main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      REFERENCE_PORT: String(port),
      REFERENCE_RPC_URL: options.rpcUrl,
      REFERENCE_KEY: options.privateKey,
      REFERENCE_POLLING_MS: String(options.pollingIntervalMs),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  guardChild(child);
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-8_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const watcher = watchProblems(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const escalate = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(escalate);
  };
  const unregister = cleanupOnSignal(stop);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) {
      unregister();
      throw new Error(`reference facilitator exited during start-up:\n${output}`);
    }
    try {
      if ((await fetch(`${url}/supported`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      unregister();
      await stop();
      throw new Error(`reference facilitator never became ready:\n${output}`);
    }
    await sleep(100);
  }
  return {
    url,
    pid: child.pid!,
    problems: watcher.problems,
    async stop() {
      unregister();
      await stop();
    },
  };
}
