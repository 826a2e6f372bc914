import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A JSON-RPC error as a Solana node returns it (`code`, `message`, optional `data`). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const INVALID_PARAMS = -32602;
export const METHOD_NOT_FOUND = -32601;
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;

export type RpcHandler = (params: unknown[]) => unknown;

export interface JsonRpcServer {
  url: string;
  close(): Promise<void>;
}

/**
 * A minimal HTTP JSON-RPC 2.0 server (POST, single or batch requests). Handlers run synchronously on the
 * event loop, so two requests never interleave inside one handler: the chain behind them needs no locks.
 */
export async function startJsonRpcServer(handlers: Map<string, RpcHandler>, host: string, port: number, onCall?: (method: string) => void): Promise<JsonRpcServer> {
  const server: Server = createServer((request, response) => {
    if (request.method !== 'POST') {
      // a GET on the URL answers like a node's health route, handy for a readiness poll
      response.writeHead(request.url === '/health' ? 200 : 405, { 'content-type': 'text/plain' }).end(request.url === '/health' ? 'ok' : 'POST JSON-RPC');
      return;
    }
    readBody(request)
      .then((body) => {
        let payload: unknown;
        try {
          payload = JSON.parse(body);
        } catch {
          return reply(response, errorResponse(null, new RpcError(PARSE_ERROR, 'Parse error')));
        }
        const answer = Array.isArray(payload) ? payload.map((one) => handle(handlers, one, onCall)) : handle(handlers, payload, onCall);
        reply(response, answer);
      })
      .catch(() => response.writeHead(400).end());
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: actualPort } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${actualPort}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function handle(handlers: Map<string, RpcHandler>, request: unknown, onCall?: (method: string) => void): unknown {
  const { id = null, method, params = [] } = (request ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
  if (typeof method !== 'string') return errorResponse(id, new RpcError(INVALID_REQUEST, 'Invalid request'));
  onCall?.(method);
  const handler = handlers.get(method);
  if (!handler) return errorResponse(id, new RpcError(METHOD_NOT_FOUND, 'Method not found'));
  try {
    return { jsonrpc: '2.0', result: handler(Array.isArray(params) ? params : [params]), id };
  } catch (error) {
    if (error instanceof RpcError) return errorResponse(id, error);
    return errorResponse(id, new RpcError(INTERNAL_ERROR, `Internal error: ${error instanceof Error ? error.message : String(error)}`));
  }
}

function errorResponse(id: unknown, error: RpcError) {
  return { jsonrpc: '2.0', error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) }, id };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

// u64 values (lamports, rentEpoch = 2^64-1) go out as JSON numbers like a node writes them; kit reads them as bigints
const BIGINT_MARK = '__u64__';
function reply(response: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body, (_key, value: unknown) => (typeof value === 'bigint' ? `${BIGINT_MARK}${value}` : value)).replace(
    new RegExp(`"${BIGINT_MARK}(-?\\d+)"`, 'g'),
    '$1',
  );
  response.writeHead(200, { 'content-type': 'application/json' }).end(text);
}
