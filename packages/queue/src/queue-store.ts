import { createPostgresBackend, Queue, Worker, type Processor, type WorkerOptions } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { createRedisConnection, type RedisTarget } from './redis-connection';
import { queuesOn, type Queues } from './queues';

type QueueBackendName = 'redis' | 'postgres';

/** Where the queues live: Redis (the default), or BullMQ's PostgreSQL backend in the service's own database. */
export type QueueStoreTarget =
  | { backend: 'redis'; redis: RedisTarget; prefix: string }
  | { backend: 'postgres'; databaseUrl: string; /** largest pg pool of one queue or worker */ poolMax?: number };

/** What a worker needs besides its processor (BullMQ's own options minus the connection). */
type QueueWorkerOptions = Omit<WorkerOptions, 'connection' | 'prefix'>;

/**
 * The queues' datastore, whichever it is: the same BullMQ Queue and Worker API on both. Producers share
 * one connection; each worker gets its own (a Redis worker blocks on its connection; a PostgreSQL one
 * holds a LISTEN connection besides its pool).
 */
export interface QueueStore {
  readonly backend: QueueBackendName;
  /** `onError` hears connection trouble (BullMQ would otherwise print it to the console). */
  openQueues(onError?: (err: Error) => void): Queues;
  openWorker(name: string, processor: Processor, options: QueueWorkerOptions): Worker;
  /** readiness of the datastore, as /readyz names it */
  readiness: { name: string; check(): Promise<void> };
  /** the Redis a producer talks to (the rate limiter counts there); none on the PostgreSQL backend */
  readonly redis?: Redis | Cluster;
  /** releases what the store itself opened (queues and workers are closed by their owners) */
  close(): Promise<void>;
}

// BullMQ keeps its tables in this schema of DATABASE_URL's database, apart from ours
const POSTGRES_QUEUE_SCHEMA = 'bullmq';

export function openQueueStore(target: QueueStoreTarget): QueueStore {
  return target.backend === 'redis' ? redisStore(target.redis, target.prefix) : postgresStore(target.databaseUrl, target.poolMax ?? 10);
}

function redisStore(redisTarget: RedisTarget, prefix: string): QueueStore {
  const producer = createRedisConnection(redisTarget, 'producer');
  // BullMQ leaves a connection it was given open when it closes: the store closes them
  const workerConnections: Array<Redis | Cluster> = [];
  return {
    backend: 'redis',
    redis: producer,
    openQueues: (onError) => queuesOn((name, defaultJobOptions) => new Queue(name, { connection: producer, prefix, defaultJobOptions }), onError),
    openWorker(name, processor, options) {
      const connection = createRedisConnection(redisTarget, 'worker');
      workerConnections.push(connection);
      return new Worker(name, processor, { ...options, connection, prefix });
    },
    readiness: { name: 'redis', check: async () => void (await producer.ping()) },
    async close() {
      producer.disconnect();
      for (const connection of workerConnections.splice(0)) connection.disconnect();
    },
  };
}

function postgresStore(databaseUrl: string, poolMax: number): QueueStore {
  // `migrate`: BullMQ creates or upgrades its schema on first connect, once across processes (advisory lock)
  const connection = { connectionString: databaseUrl, schema: POSTGRES_QUEUE_SCHEMA, max: poolMax, migrate: true };
  let probe: Queue | undefined;
  return {
    backend: 'postgres',
    openQueues(onError) {
      const queues = queuesOn((name, defaultJobOptions) => new Queue(name, { connection, defaultJobOptions }, createPostgresBackend) as unknown as Queue, onError);
      probe ??= queues.settlement as unknown as Queue;
      return queues;
    },
    openWorker: (name, processor, options) => new Worker(name, processor, { ...options, connection }, createPostgresBackend) as unknown as Worker,
    readiness: {
      name: 'queues',
      async check() {
        if (!probe) throw new Error('no queue opened yet');
        await probe.getJobCounts('waiting');
      },
    },
    async close() {},
  };
}

/** The store the service's configuration names (QUEUE_BACKEND, REDIS_URL / REDIS_CLUSTER_NODES, DATABASE_URL). */
export function queueStoreTargetOf(config: {
  queueBackend: QueueBackendName;
  redisUrl: string;
  redisClusterNodes: ReadonlyArray<{ host: string; port: number }>;
  queuePrefix: string;
  databaseUrl: string;
}, poolMax?: number): QueueStoreTarget {
  return config.queueBackend === 'postgres'
    ? { backend: 'postgres', databaseUrl: config.databaseUrl, poolMax }
    : { backend: 'redis', redis: { url: config.redisUrl, clusterNodes: config.redisClusterNodes }, prefix: config.queuePrefix };
}
