import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { createProvider } from '@facilitator/evm-chain';
import { startAnvil } from './anvil-process';
import { setTimeout as sleep } from 'node:timers/promises';

/** A zombie counts as dead: whether it is reaped soon depends on what runs as pid 1 in the container. */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

describe('startAnvil', () => {
  it('listens on a free port with the requested chain id, and stop() waits for the exit', async () => {
    const anvil = await startAnvil({ chainId: 8453 });
    expect(anvil.port).toBeGreaterThan(0);
    expect(anvil.rpcUrl).toBe(`http://127.0.0.1:${anvil.port}`);
    const provider = createProvider(anvil.rpcUrl, anvil.chainId);
    expect(await provider.send('eth_chainId', [])).toBe('0x2105');
    provider.destroy();

    await anvil.stop();
    expect(isAlive(anvil.pid)).toBe(false);
    await anvil.stop(); // a second stop is harmless
  });

  it('mines on a timer with blockTime', async () => {
    const anvil = await startAnvil({ blockTime: 0.2 });
    const provider = createProvider(anvil.rpcUrl, anvil.chainId);
    try {
      await sleep(700);
      expect(await provider.getBlockNumber()).toBeGreaterThanOrEqual(2);
    } finally {
      provider.destroy();
      await anvil.stop();
    }
  });

  it("fails with anvil's own words when the port is taken", async () => {
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      await expect(startAnvil({ port })).rejects.toThrow(/anvil did not start: exited[\s\S]*(in use|Address)/i);
    } finally {
      server.close();
    }
  });

  it('does not outlive a test process killed with SIGKILL', async () => {
    // A child node process starts anvil, reports its pid, and is then killed the way jest kills a stuck worker.
    const script = `
      require('esbuild-register/dist/node').register();
      require(${JSON.stringify(require.resolve('./anvil-process'))}).startAnvil().then(
        (anvil) => { console.log(anvil.pid); setInterval(() => {}, 1000); },
        (error) => { console.error(error); process.exit(1); },
      );`;
    const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const anvilPid = await new Promise<number>((resolve, reject) => {
      parent.stdout!.once('data', (line: Buffer) => resolve(Number(line.toString().trim())));
      parent.once('exit', (code) => reject(new Error(`helper process exited with ${code}`)));
    });
    expect(isAlive(anvilPid)).toBe(true);

    parent.kill('SIGKILL');

    expect(await waitUntil(() => !isAlive(anvilPid), 5_000)).toBe(true);
  });
});
