// A load balancer in front of API processes, as a merchant's resource server meets them: each request is
// sent to the target `route` picks for it (so a test can send a retry to another process), every exchange
// is recorded, and `beforeAnswer` may hold an answer back (e.g. while the process that gave it restarts).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BalancedRequest {
  /** 1 for the first request of this method and path, 2 for the second … */
  seq: number;
  method: string;
  path: string;
}

export interface BalancedExchange extends BalancedRequest {
  target: string;
  /** the request's JSON body (undefined without one) */
  requestBody: unknown;
  status: number;
  body: unknown;
}

export interface HttpBalancer {
  url: string;
  exchanges: BalancedExchange[];
  /** the exchanges of one method and path, in order */
  of(method: string, path: string): BalancedExchange[];
  close(): Promise<void>;
}

export interface HttpBalancerOptions {
  /** the base URL (http://host:port) to send this request to */
  route(request: BalancedRequest): string | Promise<string>;
  beforeAnswer?(exchange: BalancedExchange): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function jsonOr(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function startHttpBalancer(options: HttpBalancerOptions): Promise<HttpBalancer> {
  const exchanges: BalancedExchange[] = [];
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    void (async () => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const key = `${method} ${path}`;
      const seq = (seen.get(key) ?? 0) + 1;
      seen.set(key, seq);
      const body = await bodyOf(req);
      const target = await options.route({ seq, method, path });
      const answer = await fetch(`${target}${path}`, {
        method,
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
        body: method === 'GET' || method === 'HEAD' ? undefined : body,
      });
      const text = await answer.text();
      const exchange = { seq, method, path, target, requestBody: jsonOr(body.toString()), status: answer.status, body: jsonOr(text) };
      exchanges.push(exchange);
      await options.beforeAnswer?.(exchange);
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json', connection: 'close' });
      res.end(text);
    })().catch((err: unknown) => {
      res.writeHead(502, { 'content-type': 'text/plain', connection: 'close' });
      res.end(`balancer: ${(err as Error).message}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    of: (method, path) => exchanges.filter((e) => e.method === method && e.path === path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
