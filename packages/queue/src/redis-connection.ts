import IORedis, { Redis, RedisOptions } from 'ioredis';

export type RedisRole = 'producer' | 'worker';

/**
 * Workers block on Redis and must retry forever (BullMQ refuses a connection that gives up);
 * producers, such as the API, must fail fast so a request gets a clear 503 instead of hanging.
 */
export function createRedisConnection(url: string, role: RedisRole, extra: RedisOptions = {}): Redis {
  const options: RedisOptions =
    role === 'worker'
      ? { maxRetriesPerRequest: null, enableReadyCheck: true }
      : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 5_000 };
  return new IORedis(url, { ...options, lazyConnect: false, ...extra });
}
