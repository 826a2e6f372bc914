import IORedis, { Cluster, type ClusterNode, type Redis, type RedisOptions } from 'ioredis';

type RedisRole = 'producer' | 'worker';

/** Where the queues live: one Redis by URL, or a Redis Cluster by its seed nodes. */
export interface RedisTarget {
  url: string;
  clusterNodes?: ReadonlyArray<{ host: string; port: number }>;
}

/**
 * Workers block on Redis and must retry forever (BullMQ refuses a connection that gives up);
 * producers, such as the API, must fail fast so a request gets a clear 503 instead of hanging.
 */
function roleOptions(role: RedisRole): RedisOptions {
  return role === 'worker'
    ? { maxRetriesPerRequest: null, enableReadyCheck: true }
    : { maxRetriesPerRequest: 1, connectTimeout: 5_000 };
}

export function createRedisConnection(target: RedisTarget, role: RedisRole): Redis | Cluster {
  if (target.clusterNodes && target.clusterNodes.length > 0) {
    // a cluster needs its offline queue while it discovers slots; failing fast still holds per command
    return new Cluster(target.clusterNodes as ClusterNode[], { redisOptions: roleOptions(role), enableReadyCheck: true });
  }
  return new IORedis(target.url, { ...roleOptions(role), ...(role === 'producer' ? { enableOfflineQueue: false } : {}) });
}
