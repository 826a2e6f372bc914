import { ServiceUnavailableError } from '@facilitator/core';

interface ErrorLike {
  name?: string;
  message: string;
  code?: unknown;
  /** set by our own pg-pool wrapper on the errors of its queries */
  dependency?: string;
  cause?: ErrorLike;
  meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; code?: unknown } } };
}

/** Every place a Postgres SQLSTATE can sit: on the error, its cause, or (Prisma) the driver adapter's error. */
function sqlStates(e: ErrorLike): string[] {
  const adapter = e.meta?.driverAdapterError?.cause;
  return [e.code, e.cause?.code, adapter?.originalCode, adapter?.code].filter((c) => c !== undefined).map(String);
}

/**
 * Failures of our own dependencies, recognised so the client gets a clear 503 naming what is down
 * (and may retry) instead of a 500. One table: what to look for, and which dependency it means.
 * SQLSTATE 57P0x: the server is shutting down or starting; 08xxx: connection failures; 53xxx: out of
 * resources (e.g. too many clients).
 */
const RULES: ReadonlyArray<{ dependency: string; test: (err: ErrorLike) => boolean }> = [
  { dependency: 'database', test: (e) => e.dependency === 'database' },
  { dependency: 'database', test: (e) => sqlStates(e).some((code) => /^(57P0[123]|08\d{3}|53\d{3}|P1001|P1002|P1008|P1017|P2024)$/.test(code)) },
  {
    dependency: 'database',
    test: (e) =>
      e.name === 'DriverAdapterError' ||
      /Can't reach database|too many clients|Connection terminated|not queryable|Client was closed|timeout exceeded when trying to connect|the database system is (starting up|shutting down)/i.test(e.message),
  },
  {
    dependency: 'queue',
    test: (e) => e.name === 'MaxRetriesPerRequestError' || /Stream isn't writeable|Connection is closed|CLUSTERDOWN|Redis connection/i.test(e.message),
  },
  { dependency: 'network', test: (e) => /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH)$/.test(String(e.code ?? e.cause?.code ?? '')) },
];

/** Duck-typed: errors made in another realm (e.g. under a test runner) fail `instanceof Error`. */
function isErrorLike(err: unknown): err is ErrorLike {
  return typeof err === 'object' && err !== null && typeof (err as ErrorLike).message === 'string';
}

export function asServiceUnavailable(err: unknown): ServiceUnavailableError | undefined {
  if (!isErrorLike(err)) return undefined;
  const rule = RULES.find((r) => r.test(err) || (isErrorLike(err.cause) && r.test(err.cause)));
  if (!rule) return undefined;
  return new ServiceUnavailableError(`the ${rule.dependency} is unavailable; try again shortly`, { dependency: rule.dependency }, err);
}
