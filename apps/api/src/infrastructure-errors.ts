import { ServiceUnavailableError } from '@facilitator/core';

/**
 * Failures of our own dependencies, recognised so the client gets a clear 503 naming what is down
 * (and may retry) instead of a 500. One table: what to look for, and which dependency it means.
 */
const RULES: ReadonlyArray<{ dependency: string; test: (err: ErrorLike) => boolean }> = [
  {
    dependency: 'database',
    test: (e) =>
      /^Prisma/.test(e.name ?? '') && /P1001|P1002|P1008|P1017|P2024|Can't reach database|connection|ECONNREFUSED|terminat|timed out/i.test(`${e.code ?? ''} ${e.message}`),
  },
  // SQLSTATE 57P0x: the server is shutting down; 08xxx: connection failures; 53xxx: out of resources (e.g. too many clients)
  { dependency: 'database', test: (e) => e.name === 'DriverAdapterError' || /^(57P0[123]|08\d{3}|53\d{3})$/.test(String(e.code ?? e.cause?.code ?? '')) || /too many clients/i.test(e.message) },
  {
    dependency: 'queue',
    test: (e) => e.name === 'MaxRetriesPerRequestError' || /Stream isn't writeable|Connection is closed|CLUSTERDOWN|Redis connection/i.test(e.message),
  },
  { dependency: 'network', test: (e) => /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH)$/.test(String(e.code ?? e.cause?.code ?? '')) },
];

interface ErrorLike {
  name?: string;
  message: string;
  code?: unknown;
  cause?: { code?: unknown };
}

export function asServiceUnavailable(err: unknown): ServiceUnavailableError | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as ErrorLike;
  const rule = RULES.find((r) => r.test(e) || (e.cause instanceof Error && r.test(e.cause as ErrorLike)));
  if (!rule) return undefined;
  return new ServiceUnavailableError(`the ${rule.dependency} is unavailable; try again shortly`, { dependency: rule.dependency });
}
