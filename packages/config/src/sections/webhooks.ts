import { isIP } from 'node:net';
import { ConfigError } from '../config-error';
import type { EnvReader } from '../parsers';

/** The spec's schedule: attempt 1 at once, then after 1 min, 5 min, 15 min, 30 min and 1 h. */
export const WEBHOOK_RETRY_DELAYS_MS = [60_000, 300_000, 900_000, 1_800_000, 3_600_000] as const;

export interface WebhookDnsConfig {
  /** WEBHOOK_DNS_SERVERS: `ip` or `ip:port`; empty: the system's (resolv.conf) */
  servers: string[];
  /** WEBHOOK_DNS_TIMEOUT_MS: one query's timeout */
  timeoutMs: number;
  /** WEBHOOK_DNS_TRIES: tries per server */
  tries: number;
  /** WEBHOOK_DNS_MAX_IN_FLIGHT: host lookups at once per process; more fail at once as busy */
  maxInFlight: number;
}

/** Development and tests only: let webhooks reach private addresses. */
export function readWebhookAllowPrivate(reader: EnvReader, production: boolean): boolean {
  const allow = reader.boolean('WEBHOOK_ALLOW_PRIVATE', false);
  if (allow && production) throw new ConfigError('WEBHOOK_ALLOW_PRIVATE', 'must not be true in production');
  return allow;
}

/** WEBHOOK_DNS_*: the webhook hosts' resolver. */
export function readWebhookDns(reader: EnvReader): WebhookDnsConfig {
  const servers = reader.list('WEBHOOK_DNS_SERVERS').map((item) => {
    // node:dns setServers' forms: `1.2.3.4`, `1.2.3.4:53`, `::1`, `[::1]:53`
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(item);
    const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(item);
    const [address, port] = bracketed ? [bracketed[1], bracketed[2]] : v4 ? [v4[1], v4[2]] : [item, undefined];
    const family = isIP(address);
    const ok = (bracketed ? family === 6 : v4 ? family === 4 : family === 6) && (port === undefined || (Number(port) >= 1 && Number(port) <= 65535));
    if (!ok) throw new ConfigError('WEBHOOK_DNS_SERVERS', `entry "${item}" must be an IP address, optionally with :port`);
    return item;
  });
  return {
    servers,
    timeoutMs: reader.integer('WEBHOOK_DNS_TIMEOUT_MS', 2_000, 50, 30_000),
    tries: reader.integer('WEBHOOK_DNS_TRIES', 2, 1, 5),
    maxInFlight: reader.integer('WEBHOOK_DNS_MAX_IN_FLIGHT', 64, 1, 10_000),
  };
}
