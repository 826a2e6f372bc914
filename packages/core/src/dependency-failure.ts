/**
 * Failures of our own dependencies (the database, the queue's Redis, the network), recognised by shape.
 * The API answers them with a 503 naming what is down; the worker retries them (transient) instead of
 * ending a settlement. One table: what to look for, and which dependency it means.
 */
interface ErrorLike {
  name?: string;
  message: string;
  code?: unknown;
  /** set by our own pg-pool wrapper on the errors of its queries */
  dependency?: string;
  cause?: ErrorLike;
  meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; code?: unknown } } };
}

type Dependency = 'database' | 'queue' | 'network';

/** Every place a Postgres SQLSTATE can sit: on the error, its cause, or (Prisma) the driver adapter's error. */
function sqlStates(e: ErrorLike): string[] {
  const adapter = e.meta?.driverAdapterError?.cause;
  return [e.code, e.cause?.code, adapter?.originalCode, adapter?.code].filter((c) => c !== undefined).map(String);
}

// SQLSTATE 57P0x: the server is shutting down or starting; 08xxx: connection failures; 53xxx: out of
// resources (e.g. too many clients); 40xxx: serialization failure or deadlock (retrying succeeds).
const RULES: ReadonlyArray<{ dependency: Dependency; test: (err: ErrorLike) => boolean }> = [
  { dependency: 'database', test: (e) => sqlStates(e).some((code) => /^(57P0[123]|08\d{3}|53\d{3}|40001|40P01|P1001|P1002|P1008|P1017|P2024)$/.test(code)) },
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

/**
 * The dependency whose outage this error is, or undefined. `anyDatabaseError`: count every error our
 * pg wrapper tagged as the database's (the API's view: not the client's fault); the worker passes false,
 * since a constraint violation will not go away by retrying.
 */
export function unavailableDependencyOf(err: unknown, anyDatabaseError = true): Dependency | undefined {
  if (!isErrorLike(err)) return undefined;
  if (anyDatabaseError && (err.dependency === 'database' || (isErrorLike(err.cause) && err.cause.dependency === 'database'))) return 'database';
  return RULES.find((r) => r.test(err) || (isErrorLike(err.cause) && r.test(err.cause)))?.dependency;
}
