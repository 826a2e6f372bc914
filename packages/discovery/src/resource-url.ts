import { isPublicAddress } from '@facilitator/core';
import ipaddr from 'ipaddr.js';

/** The longest resource URL the catalog keeps (the reference's icon URL bound). */
export const MAX_URL_LENGTH = 2048;

/** Names that only mean something inside a network: never a public resource. */
const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.lan', '.home.arpa', '.intranet', '.corp', '.private'];
const LOCAL_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);

export { isPublicAddress };

/** Why a host cannot be a public resource's, by its spelling alone (no lookup); undefined when it may be. */
export function privateHostProblem(hostname: string): string | undefined {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase().replace(/\.$/, '');
  if (host === '') return 'the URL has no host';
  // every spelling WHATWG URL turns into an IPv4 literal (decimal, octal, hex, short forms) arrives here dotted
  if (ipaddr.isValid(host)) return isPublicAddress(host) ? undefined : `${host} is a private, loopback or reserved address`;
  if (LOCAL_NAMES.has(host) || LOCAL_SUFFIXES.some((suffix) => host.endsWith(suffix))) return `${host} names a local or internal host`;
  if (!host.includes('.')) return `${host} is a single-label name, which only resolves inside a network`;
  return undefined;
}

export interface UrlProblem {
  reason: string;
}

/**
 * A resource URL the catalog may list: http(s), no credentials, at most MAX_URL_LENGTH characters, and, unless
 * `allowPrivate` (development and tests), a host that is public by its spelling. DNS names are resolved later,
 * off the payment's path, by the indexer (`DiscoveryIndexer`).
 */
export function checkResourceUrl(text: unknown, allowPrivate: boolean): { url: URL } | UrlProblem {
  if (typeof text !== 'string' || text === '') return { reason: 'the payment names no resource URL (paymentPayload.resource.url)' };
  if (text.length > MAX_URL_LENGTH) return { reason: `the URL is ${text.length} characters long; at most ${MAX_URL_LENGTH} are listed` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { reason: 'not a valid absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { reason: `the scheme ${url.protocol.replace(/:$/, '')} is not http or https` };
  if (url.username !== '' || url.password !== '') return { reason: 'the URL carries credentials' };
  if (!allowPrivate) {
    const problem = privateHostProblem(url.hostname);
    if (problem) return { reason: `private address refused: ${problem}` };
  }
  return { url };
}
