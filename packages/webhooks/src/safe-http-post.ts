import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { hostOf, isPublicAddress } from './address-policy';
import { defaultHostResolver, HostLookupError, type HostResolver } from './host-resolver';

export interface PostResult {
  statusCode?: number;
  /** the raw error, for our logs only (it may describe the receiver's network) */
  error?: string;
  /** the socket error's code (ECONNREFUSED, ENOTFOUND, CERT_…), for the outcome category */
  errorCode?: string;
  /** our deadline passed */
  timedOut?: boolean;
  durationMs: number;
}

/**
 * The socket's own lookup: resolves through the webhook resolver (c-ares, capped, with a timeout; never
 * the thread pool's getaddrinfo) and refuses non-public answers. Used as the socket's own lookup, so the
 * address checked is the address connected to: a DNS answer that changes after validation (rebinding)
 * gains nothing.
 */
function publicOnlyLookup(allowPrivate: boolean, resolver: HostResolver = defaultHostResolver()): LookupFunction {
  return (hostname, options, callback) => {
    const family = (options as { family?: number | string }).family;
    resolver.resolve(hostname).then(
      (all) => {
        const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
        const list: LookupAddress[] = all
          .map((address) => ({ address, family: ipaddr.parse(address).kind() === 'ipv6' ? 6 : 4 }))
          .filter((a) => wanted === 0 || a.family === wanted);
        const refused = list.find((a) => !allowPrivate && !isPublicAddress(a.address));
        if (refused) {
          const error = Object.assign(new Error(`refused to connect to non-public address ${refused.address}`), { code: 'EADDRNOTPUBLIC' });
          return callback(error, '', 0);
        }
        if (list.length === 0) return callback(Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }), '', 0);
        if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
        callback(null, list[0].address, list[0].family);
      },
      (err: unknown) => {
        const code = err instanceof HostLookupError ? err.code : 'ENOTFOUND';
        callback(Object.assign(new Error((err as Error).message), { code }), '', 0);
      },
    );
  };
}

// Connections to receivers are kept open and reused, so a burst of deliveries to one receiver does not
// pay a TCP (and TLS) handshake each. A reused socket goes to the address checked when it was opened, so
// reuse cannot bypass the address policy; the two policies keep separate pools all the same. Bounded: a
// few idle sockets per receiver, closed after a few seconds, and a ceiling on open sockets in all.
const IDLE_SOCKET_MS = 4_000;
const POOL = { keepAlive: true, maxSockets: 64, maxFreeSockets: 32, maxTotalSockets: 1_024, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' } as const;
const agents = new Map<string, http.Agent>();

function agentFor(protocol: string, allowPrivate: boolean): http.Agent {
  const key = `${protocol}${allowPrivate ? 'private' : 'public'}`;
  let agent = agents.get(key);
  if (!agent) {
    agent = protocol === 'https:' ? new https.Agent(POOL) : new http.Agent(POOL);
    agents.set(key, agent);
  }
  return agent;
}

/** A receiver's answer body is read only to free its connection for the next delivery, and only this much. */
const MAX_DRAINED_BYTES = 64 * 1024;

/**
 * POSTs JSON once: no redirects followed, a hard deadline for the whole exchange, success decided by
 * the caller from the status code. Literal IP hosts are checked here (they never reach a lookup).
 */
export function safeHttpPost(
  target: URL,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; allowPrivate: boolean; resolver?: HostResolver },
): Promise<PostResult> {
  const started = Date.now();
  const done = (result: Omit<PostResult, 'durationMs'>): PostResult => ({ ...result, durationMs: Date.now() - started });
  const host = hostOf(target);
  if (!options.allowPrivate && ipaddr.isValid(host) && !isPublicAddress(host)) {
    return Promise.resolve(done({ error: `refused to connect to non-public address ${host}`, errorCode: 'EADDRNOTPUBLIC' }));
  }
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const request = client.request(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body).toString(), ...headers },
      lookup: publicOnlyLookup(options.allowPrivate, options.resolver),
      agent: agentFor(target.protocol, options.allowPrivate),
    });
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      request.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    request.on('response', (response) => {
      // the status decides, at once: a receiver streaming a slow body cannot hold the delivery. The body
      // is drained in the background so the connection can be reused; one too long or too slow loses it.
      clearTimeout(deadline);
      resolve(done({ statusCode: response.statusCode }));
      const drainDeadline = setTimeout(() => request.destroy(), options.timeoutMs);
      let drained = 0;
      response.on('data', (chunk: Buffer) => {
        drained += chunk.length;
        if (drained > MAX_DRAINED_BYTES) request.destroy();
      });
      response.on('end', () => clearTimeout(drainDeadline));
      response.on('close', () => clearTimeout(drainDeadline));
      response.on('error', () => undefined);
    });
    request.on('error', (err) => {
      clearTimeout(deadline);
      // after a response, destroy() reports an error too; the first resolve wins
      resolve(done({ error: err.message, errorCode: (err as NodeJS.ErrnoException).code, timedOut }));
    });
    request.end(body);
  });
}
