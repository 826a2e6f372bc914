import { isPublicAddress } from '@facilitator/core';
import ipaddr from 'ipaddr.js';
import { defaultHostResolver, HostLookupError, isLocalhostName, type HostResolver } from './host-resolver';

/** Which addresses a webhook may reach: only globally routable unicast ones (core's `isPublicAddress`). */
export { isPublicAddress };

interface WebhookUrlPolicy {
  /** production: https only */
  requireHttps: boolean;
  /** development and tests only: lift the public-address rule (and the port rule) */
  allowPrivate: boolean;
  /** ports a webhook URL may name (default 443 and 80); a receiver elsewhere is refused */
  allowedPorts?: readonly number[];
}

const DEFAULT_WEBHOOK_PORTS: readonly number[] = [443, 80];

/** The port a URL connects to, explicit or the scheme's default. */
function portOf(url: URL): number {
  return url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** Whether delivery may connect to this URL's port (every port when private addresses are allowed). */
export function isAllowedPort(url: URL, policy: Pick<WebhookUrlPolicy, 'allowPrivate' | 'allowedPorts'>): boolean {
  return policy.allowPrivate || (policy.allowedPorts ?? DEFAULT_WEBHOOK_PORTS).includes(portOf(url));
}

export class WebhookUrlRejected extends Error {}

/** The host of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * The checks of a webhook URL that need no lookup, run before anything else of a verify request: the
 * scheme, no credentials, the port, and a host that is an IP literal or `localhost` must be public. A DNS
 * name is resolved only later (`assertPublicHost`), after the payment's signature was checked.
 */
export function parseWebhookUrl(text: string, policy: WebhookUrlPolicy): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlRejected('webhook_url is not a valid URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && !policy.requireHttps)) {
    throw new WebhookUrlRejected(policy.requireHttps ? 'webhook_url must use https' : 'webhook_url must use http or https');
  }
  if (url.username || url.password) throw new WebhookUrlRejected('webhook_url must not carry credentials');
  if (!isAllowedPort(url, policy)) {
    throw new WebhookUrlRejected(`webhook_url port ${portOf(url)} is not allowed (allowed: ${(policy.allowedPorts ?? DEFAULT_WEBHOOK_PORTS).join(', ')})`);
  }
  if (policy.allowPrivate) return url;
  const host = hostOf(url);
  if (ipaddr.isValid(host) && !isPublicAddress(host)) throw new WebhookUrlRejected(`webhook_url resolves to a non-public address (${host})`);
  if (isLocalhostName(host)) throw new WebhookUrlRejected('webhook_url resolves to a non-public address (localhost is loopback)');
  return url;
}

/**
 * Resolves a DNS name through the capped, non-blocking resolver and refuses it when it does not exist or
 * any answer is non-public. A lookup that could not finish (timeout, busy, server failure) passes: it is
 * not an answer, and delivery checks the address again when it connects, so DNS rebinding gains nothing.
 */
export async function assertPublicHost(url: URL, policy: Pick<WebhookUrlPolicy, 'allowPrivate'>, resolver: HostResolver): Promise<void> {
  const host = hostOf(url);
  if (policy.allowPrivate || ipaddr.isValid(host)) return;
  let addresses: string[];
  try {
    addresses = await resolver.resolve(host);
  } catch (err) {
    if (err instanceof HostLookupError && err.noSuchHost) throw new WebhookUrlRejected(`webhook_url host ${JSON.stringify(host)} does not resolve`);
    return;
  }
  const refused = addresses.find((address) => !isPublicAddress(address));
  if (refused !== undefined) throw new WebhookUrlRejected(`webhook_url resolves to a non-public address (${refused})`);
}

/** Both checks, one after the other (tools and tests; the API runs them at two moments). */
export async function assertAcceptableWebhookUrl(text: string, policy: WebhookUrlPolicy, resolver: HostResolver = defaultHostResolver()): Promise<URL> {
  const url = parseWebhookUrl(text, policy);
  await assertPublicHost(url, policy, resolver);
  return url;
}
