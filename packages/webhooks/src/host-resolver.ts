import { Resolver } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

interface HostResolverOptions {
  /** DNS servers (`ip` or `ip:port`); the system's (resolv.conf) when unset (WEBHOOK_DNS_SERVERS, also the tests' seam) */
  servers?: readonly string[];
  /** one query's timeout (WEBHOOK_DNS_TIMEOUT_MS) */
  timeoutMs: number;
  /** tries per server before giving up (WEBHOOK_DNS_TRIES) */
  tries: number;
  /** host lookups in flight at once in this process; more fail at once as busy (WEBHOOK_DNS_MAX_IN_FLIGHT) */
  maxInFlight: number;
}

const DEFAULT_HOST_RESOLVER_OPTIONS: HostResolverOptions = { timeoutMs: 2_000, tries: 2, maxInFlight: 64 };

/** Error codes of a lookup that did not answer (as opposed to "no such host"). */
export const LOOKUP_BUSY = 'ELOOKUPBUSY';
const NO_SUCH_HOST = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'EBADNAME', 'EBADQUERY', 'EFORMERR', 'EBADRESP']);

export class HostLookupError extends Error {
  constructor(
    message: string,
    /** ENOTFOUND (no such host, or no address), ELOOKUPBUSY (too many lookups in flight), ETIMEOUT, … */
    readonly code: string,
  ) {
    super(message);
  }

  /** The name positively does not resolve (a typo, a dead domain), as opposed to a lookup that could not finish. */
  get noSuchHost(): boolean {
    return this.code === 'ENOTFOUND';
  }
}

/** RFC 6761: `localhost` and names under it are loopback, answered without asking DNS. */
export function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Resolves webhook hosts with c-ares (node:dns `Resolver`: A and AAAA queries on the event loop), never
 * `dns.lookup`, which runs getaddrinfo on libuv's 4-thread pool: there, a few slow names of a stranger's
 * choosing stall every other lookup, file read and crypto call of the process. Each lookup has a timeout
 * and a number of tries, and at most `maxInFlight` run at once: one more fails at once (`ELOOKUPBUSY`)
 * rather than queueing behind hosts that never answer. IP literals and `localhost` need no query.
 */
export class HostResolver {
  private readonly resolver: Resolver;
  private inFlight = 0;
  private peak = 0;

  constructor(readonly options: HostResolverOptions = DEFAULT_HOST_RESOLVER_OPTIONS) {
    this.resolver = new Resolver({ timeout: options.timeoutMs, tries: options.tries });
    if (options.servers && options.servers.length > 0) this.resolver.setServers([...options.servers]);
  }

  /** Lookups running now, and the most that ran at once (for tests and metrics). */
  get stats(): { inFlight: number; peakInFlight: number } {
    return { inFlight: this.inFlight, peakInFlight: this.peak };
  }

  /** Every address of the host, IPv4 first. Throws a HostLookupError. */
  async resolve(host: string): Promise<string[]> {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    if (ipaddr.isValid(bare)) return [bare];
    if (isLocalhostName(bare)) return ['127.0.0.1', '::1'];
    if (this.inFlight >= this.options.maxInFlight) {
      throw new HostLookupError(`too many host lookups in flight (${this.options.maxInFlight})`, LOOKUP_BUSY);
    }
    this.inFlight += 1;
    this.peak = Math.max(this.peak, this.inFlight);
    try {
      const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(bare), this.resolver.resolve6(bare)]);
      const addresses = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
      if (addresses.length > 0) return addresses;
      const codes = [v4, v6].map((r) => (r.status === 'rejected' ? String((r.reason as NodeJS.ErrnoException).code ?? 'EUNKNOWN') : 'ENODATA'));
      // "no such host" only when both queries say so; a timeout or a server failure on either is not an answer
      const code = codes.every((c) => NO_SUCH_HOST.has(c)) ? 'ENOTFOUND' : (codes.find((c) => !NO_SUCH_HOST.has(c)) ?? 'EUNKNOWN');
      throw new HostLookupError(`${host}: ${code}`, code);
    } finally {
      this.inFlight -= 1;
    }
  }
}

let shared: HostResolver | undefined;

/** The process's resolver when none is configured: the system's servers, the default limits. */
export function defaultHostResolver(): HostResolver {
  shared ??= new HostResolver(DEFAULT_HOST_RESOLVER_OPTIONS);
  return shared;
}
