// A JSON-RPC front for a node (anvil) that a test can make misbehave for chosen requests only: hold back
// the answer of any request (single or batch) holding a matching call, or lag behind the chain (a head some
// blocks back, no blocks, receipts or nonces past it), as a slow or lagging RPC provider does.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface JsonRpcRequest {
  id: number | string;
  method: string;
  params?: unknown[];
}

export interface JsonRpcProxy {
  url: string;
  /** requests (HTTP bodies) seen, each as the list of its calls, in arrival order */
  readonly requests: JsonRpcRequest[][];
  /** a request holding a call this matches is answered only after `delayMs` */
  slow?: { match: (call: JsonRpcRequest) => boolean; delayMs: number };
  /** answers as a node this many blocks behind the real one would (0: none) */
  lagBlocks: number;
  close(): Promise<void>;
}

export async function startJsonRpcProxy(target: string): Promise<JsonRpcProxy> {
  const timers = new Set<NodeJS.Timeout>();
  const proxy: JsonRpcProxy = { url: '', requests: [], lagBlocks: 0, close: async () => undefined };

  async function forward(calls: JsonRpcRequest[]): Promise<Array<Record<string, unknown>>> {
    const response = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(calls) });
    return (await response.json()) as Array<Record<string, unknown>>;
  }

  /** One call as a node `lagBlocks` behind answers it. */
  async function lagging(call: JsonRpcRequest, head: number): Promise<Record<string, unknown>> {
    const visible = head - proxy.lagBlocks;
    const params = call.params ?? [];
    const answer = (result: unknown) => ({ jsonrpc: '2.0', id: call.id, result });
    switch (call.method) {
      case 'eth_blockNumber':
        return answer(`0x${visible.toString(16)}`);
      case 'eth_getBlockByNumber': {
        const tag = params[0] as string;
        const n = tag === 'latest' || tag === 'pending' ? visible : Number(BigInt(tag));
        if (n > visible) return answer(null);
        return (await forward([{ ...call, params: [`0x${n.toString(16)}`, ...params.slice(1)] }]))[0];
      }
      case 'eth_getTransactionReceipt': {
        const [real] = await forward([call]);
        const receipt = real.result as { blockNumber?: string } | null;
        return receipt?.blockNumber !== undefined && Number(BigInt(receipt.blockNumber)) > visible ? answer(null) : real;
      }
      case 'eth_getTransactionCount':
        return (await forward([{ ...call, params: [params[0], `0x${visible.toString(16)}`] }]))[0];
      default:
        return (await forward([call]))[0];
    }
  }

  async function answer(calls: JsonRpcRequest[]): Promise<Array<Record<string, unknown>>> {
    if (proxy.lagBlocks === 0) return forward(calls);
    const [head] = await forward([{ jsonrpc: '2.0', id: 0, method: 'eth_blockNumber', params: [] } as JsonRpcRequest]);
    const height = Number(BigInt(head.result as string));
    return Promise.all(calls.map((c) => lagging(c, height)));
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonRpcRequest | JsonRpcRequest[];
        const calls = Array.isArray(parsed) ? parsed : [parsed];
        proxy.requests.push(calls);
        const slow = proxy.slow && calls.some(proxy.slow.match) ? proxy.slow.delayMs : 0;
        if (slow > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(() => (timers.delete(timer), resolve()), slow);
            timers.add(timer);
          });
        }
        if (res.destroyed) return;
        try {
          const answers = await answer(calls);
          const body = JSON.stringify(Array.isArray(parsed) ? answers : answers[0]);
          res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        } catch {
          res.writeHead(502).end('bad gateway');
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      timers.forEach((t) => clearTimeout(t));
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
