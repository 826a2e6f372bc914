import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { hostOf, isPublicAddress } from './address-policy';

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
 * Resolves like the system does, but refuses non-public answers. Used as the socket's own lookup, so
 * the address checked is the address connected to: a DNS answer that changes after validation
 * (rebinding) gains nothing.
 */
export function publicOnlyLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as LookupAddress[];
      const refused = list.find((a) => !allowPrivate && !isPublicAddress(a.address));
      if (refused) {
        const error = Object.assign(new Error(`refused to connect to non-public address ${refused.address}`), { code: 'EADDRNOTPUBLIC' });
        return callback(error, '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/**
 * POSTs JSON once: no redirects followed, a hard deadline for the whole exchange, success decided by
 * the caller from the status code. Literal IP hosts are checked here (they never reach a lookup).
 */
export function safeHttpPost(
  target: URL,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; allowPrivate: boolean },
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
      lookup: publicOnlyLookup(options.allowPrivate),
      agent: false,
    });
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      request.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    request.on('response', (response) => {
      // the status decides; the body is not read, so a receiver streaming a slow body cannot hold us
      clearTimeout(deadline);
      resolve(done({ statusCode: response.statusCode }));
      response.on('error', () => undefined);
      request.destroy();
    });
    request.on('error', (err) => {
      clearTimeout(deadline);
      // after a response, destroy() reports an error too; the first resolve wins
      resolve(done({ error: err.message, errorCode: (err as NodeJS.ErrnoException).code, timedOut }));
    });
    request.end(body);
  });
}
