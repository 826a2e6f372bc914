import { ConfigError } from '../config-error';
import type { EnvReader } from '../parsers';

/** A per-client request limit: at most `max` requests a `windowMs`. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

/** The queue dashboard's basic-auth credentials. */
export interface AdminCredentials {
  username: string;
  password: string;
}

/**
 * What strangers can make us store and compute is bounded by more than time (issue 40, 7d): both limits are
 * on by default, counted in Redis across API processes (per process with QUEUE_BACKEND=postgres). The
 * defaults leave a busy merchant server room (3000 paid-path calls a minute is 25 paid requests a second from
 * one address, verify and settle each) and a merchant at its page more than it needs; an operator raises
 * them, or sets 0 to leave limiting to a proxy in front.
 */
export function readRateLimits(reader: EnvReader): { rateLimit?: RateLimit; merchantRateLimit?: RateLimit } {
  const windowMs = reader.integer('RATE_LIMIT_WINDOW_MS', 60_000, 1_000, 3_600_000);
  const max = reader.integer('RATE_LIMIT_MAX', 3_000, 0, 100_000_000);
  const merchantMax = reader.integer('MERCHANT_RATE_LIMIT_MAX', 60, 0, 100_000_000);
  return {
    rateLimit: max > 0 ? { max, windowMs } : undefined,
    merchantRateLimit: merchantMax > 0 ? { max: merchantMax, windowMs } : undefined,
  };
}

export function readAdmin(reader: EnvReader): AdminCredentials | undefined {
  const username = reader.optionalString('ADMIN_USERNAME');
  const password = reader.optionalString('ADMIN_PASSWORD');
  if (username === undefined && password === undefined) return undefined;
  if (username === undefined) throw new ConfigError('ADMIN_USERNAME', 'must be set together with ADMIN_PASSWORD');
  if (password === undefined) throw new ConfigError('ADMIN_PASSWORD', 'must be set together with ADMIN_USERNAME');
  if (password.length < 12) throw new ConfigError('ADMIN_PASSWORD', 'must be at least 12 characters');
  return { username, password };
}
