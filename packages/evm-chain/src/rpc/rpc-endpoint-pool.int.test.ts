import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Wallet } from 'ethers';
import { classifyNodeError } from '../node-error-classification';
import { startAnvil, type AnvilProcess } from '@facilitator/evm-devnet';
import { ANVIL_DEFAULT_MNEMONIC, mnemonicAccount } from '@facilitator/evm-devnet';
import { FailoverJsonRpcProvider } from './failover-provider';
import { RpcEndpointPool, RpcEndpointsUnavailableError } from './rpc-endpoint-pool';
import { UntrustedCallTimeoutError } from './untrusted-call';
import { setTimeout as sleep } from 'node:timers/promises';

/** An HTTP front for anvil that the test can make refuse (503), hang (never answer) or pass, counting what reaches it. */
interface Front {
  url: string;
  mode: 'pass' | 'fail' | 'hang';
  methods: string[];
  /** the methods of each request (HTTP body), in arrival order */
  requests: string[][];
  close(): Promise<void>;
}

async function front(target: string): Promise<Front> {
  const hung: http.ServerResponse[] = [];
  const state: Front = { url: '', mode: 'pass', methods: [], requests: [], close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const parsed = JSON.parse(body) as { method: string } | Array<{ method: string }>;
      state.methods.push(...(Array.isArray(parsed) ? parsed : [parsed]).map((p) => p.method));
      state.requests.push((Array.isArray(parsed) ? parsed : [parsed]).map((p) => p.method));
      if (state.mode === 'hang') return void hung.push(res);
      if (state.mode === 'fail') return void res.writeHead(503).end('unavailable');
      const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      hung.forEach((r) => r.destroy());
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

const DEAD = 'http://127.0.0.1:1';
let anvil: AnvilProcess;
const fronts: Front[] = [];
const pools: RpcEndpointPool[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
});
afterAll(async () => {
  pools.forEach((p) => p.destroy());
  await Promise.all(fronts.map((f) => f.close()));
  await anvil.stop();
});

async function newFront(): Promise<Front> {
  const f = await front(anvil.rpcUrl);
  fronts.push(f);
  return f;
}

function newPool(urls: string[], options: ConstructorParameters<typeof RpcEndpointPool>[2] = {}): RpcEndpointPool {
  const pool = new RpcEndpointPool(anvil.chainId, urls, options);
  pools.push(pool);
  return pool;
}

describe('RpcEndpointPool', () => {
  it('fails over from a dead first endpoint once, then stops asking it', async () => {
    const pool = newPool([DEAD, anvil.rpcUrl]);
    expect(await pool.call<string>('eth_chainId', [])).toBe(`0x${anvil.chainId.toString(16)}`);
    for (let i = 0; i < 50; i++) await pool.call('eth_blockNumber', []);
    // asked once (failed: 1), never again: the counts prove it, no clock needed
    const [dead, alive] = pool.snapshot();
    expect(dead).toMatchObject({ endpoint: '1', up: false, failed: 1 });
    expect(alive).toMatchObject({ endpoint: '2', up: true, answered: 51 });
  });

  it('fails over after the per-call timeout when an endpoint hangs, and the hot path is fast again after that', async () => {
    const hanging = await newFront();
    hanging.mode = 'hang';
    // a 1 s timeout: a call that still went to the hanging endpoint would take that long, which a loaded
    // machine's scheduling delays do not come near
    const pool = newPool([hanging.url, anvil.rpcUrl], { callTimeoutMs: 1_000 });
    const first = Date.now();
    await pool.call('eth_blockNumber', []);
    expect(Date.now() - first).toBeGreaterThanOrEqual(990);
    const next = Date.now();
    await Promise.all(Array.from({ length: 20 }, () => pool.call('eth_blockNumber', [])));
    expect(Date.now() - next).toBeLessThan(900);
  });

  it('returns a node error as the answer it is, without failing over', async () => {
    const second = await newFront();
    const pool = newPool([anvil.rpcUrl, second.url]);
    await expect(pool.call('eth_call', [{ to: '0x0000000000000000000000000000000000000001', data: '0xzz' }, 'latest'])).rejects.toMatchObject({ name: 'JsonRpcError' });
    expect(second.methods).toEqual([]);
    expect(pool.snapshot()[0].up).toBe(true);
  });

  it('retries a down endpoint later, off the callers path, and prefers it again once it answers', async () => {
    const flaky = await newFront();
    flaky.mode = 'fail';
    const pool = newPool([flaky.url, anvil.rpcUrl], { retryAfterMs: 100 });
    await pool.call('eth_blockNumber', []);
    expect(pool.snapshot()[0].up).toBe(false);
    flaky.mode = 'pass';
    await sleep(150);
    await pool.call('eth_blockNumber', []); // starts the probe; answered by endpoint 2
    await sleep(100);
    expect(pool.snapshot()[0].up).toBe(true);
    flaky.methods.length = 0;
    await pool.call('eth_blockNumber', []);
    expect(flaky.methods).toEqual(['eth_blockNumber']);
  });

  it('says unavailable, naming neither URL nor error text, when no endpoint answers', async () => {
    const pool = newPool([DEAD, 'http://127.0.0.1:2/secret-key-123']);
    const error = await pool.call('eth_blockNumber', []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcEndpointsUnavailableError);
    expect((error as Error).message).toBe(`no RPC endpoint of chain ${anvil.chainId} answered (2 tried)`);
    expect(classifyNodeError(error).category).toBe('rpc_unavailable');
  });

  it('broadcasts a signed transaction to every healthy endpoint, skipping the down ones', async () => {
    const [a, b, c] = [await newFront(), await newFront(), await newFront()];
    c.mode = 'fail';
    const pool = newPool([a.url, b.url, c.url]);
    await pool.call('eth_blockNumber', []).catch(() => undefined);
    await pool.checkAll();
    expect(pool.snapshot().map((e) => e.up)).toEqual([true, true, false]);
    c.methods.length = 0;
    const provider = new FailoverJsonRpcProvider(pool);
    const sender = new Wallet(mnemonicAccount(ANVIL_DEFAULT_MNEMONIC, 9).privateKey, provider);
    const tx = await sender.sendTransaction({ to: '0x000000000000000000000000000000000000dEaD', value: 1n });
    await tx.wait();
    expect(a.methods).toContain('eth_sendRawTransaction');
    expect(b.methods).toContain('eth_sendRawTransaction');
    expect(c.methods).not.toContain('eth_sendRawTransaction');
  });

  it('hands node errors to ethers as ethers would have seen them from one node', async () => {
    const pool = newPool([DEAD, anvil.rpcUrl]);
    const provider = new FailoverJsonRpcProvider(pool);
    // a revert with data: CALL_EXCEPTION, classified as a revert, not as an outage
    const error = await provider.call({ to: '0x0000000000000000000000000000000000000000', data: '0x', blockTag: 'latest', gasLimit: 1n }).catch((e: unknown) => e);
    expect(classifyNodeError(error).category).not.toBe('rpc_unavailable');
    expect(await provider.getBlockNumber()).toBeGreaterThanOrEqual(0);
  });

  describe("callUntrusted (a stranger's code)", () => {
    it('goes alone on the wire while batched calls are in flight, and its answer or revert is returned as is', async () => {
      const f = await newFront();
      const pool = newPool([f.url, anvil.rpcUrl]);
      const requestsBefore = f.requests.length;
      const [answer] = await Promise.all([
        pool.callUntrusted<string>('eth_call', [{ to: '0x0000000000000000000000000000000000000004', data: '0x1234' }, 'latest']),
        ...Array.from({ length: 5 }, () => pool.call('eth_blockNumber', [])),
      ]);
      expect(answer).toBe('0x1234'); // the identity precompile
      const requests = f.requests.slice(requestsBefore);
      expect(requests.filter((methods) => methods.includes('eth_call'))).toEqual([['eth_call']]);
      expect(requests.some((methods) => methods.length > 1)).toBe(true); // the others were batched
      await expect(pool.callUntrusted('eth_call', [{ to: '0x0000000000000000000000000000000000000001', data: '0xzz' }, 'latest'])).rejects.toMatchObject({ name: 'JsonRpcError' });
      expect(pool.snapshot().map((e) => e.up)).toEqual([true, true]);
    });

    it('a slow answer is UntrustedCallTimeoutError: not failed over, no endpoint marked down, batched calls unaffected', async () => {
      const hanging = await newFront();
      const second = await newFront();
      const pool = newPool([hanging.url, second.url], { callTimeoutMs: 300 });
      await pool.call('eth_blockNumber', []);
      hanging.mode = 'hang';
      const started = Date.now();
      const error = await pool.callUntrusted('eth_call', [{ to: '0x0000000000000000000000000000000000000004', data: '0x' }, 'latest']).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UntrustedCallTimeoutError);
      expect(Date.now() - started).toBeLessThan(2_000); // its own 300 ms timeout, not a second endpoint's
      expect(second.methods).not.toContain('eth_call');
      expect(pool.snapshot().map((e) => ({ up: e.up, failed: e.failed }))).toEqual([{ up: true, failed: 0 }, { up: true, failed: 0 }]);
      // ethers' requests through the failover provider: the estimate's timeout is its own answer only
      hanging.mode = 'pass';
      const provider = new FailoverJsonRpcProvider(pool);
      expect(await provider.getBlockNumber()).toBeGreaterThanOrEqual(0);
    });

    it('a refused connection is failed over, still without a health verdict', async () => {
      const pool = newPool([DEAD, anvil.rpcUrl]);
      expect(await pool.callUntrusted<string>('eth_chainId', [])).toBe(`0x${anvil.chainId.toString(16)}`);
      expect(pool.snapshot().map((e) => e.failed)).toEqual([0, 0]);
    });
  });
});
