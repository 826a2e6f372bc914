import { ConfigError } from '../config-error';
import type { EnvReader } from '../parsers';

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const QUEUE_BACKENDS = ['redis', 'postgres'] as const;

/** REDIS_CLUSTER_NODES: when set, every connection goes to this Redis Cluster instead of REDIS_URL */
export type RedisClusterNodes = Array<{ host: string; port: number }>;
export type QueueBackend = (typeof QUEUE_BACKENDS)[number];

/** Where Redis and the queues are: REDIS_URL or a cluster, the queue backend and the keys' prefix. */
export function readQueueSettings(reader: EnvReader): { redisUrl: string; redisClusterNodes: RedisClusterNodes; queueBackend: QueueBackend; queuePrefix: string } {
  const clusterNodes = readClusterNodes(reader);
  return {
    redisUrl: reader.url('REDIS_URL', ['redis:', 'rediss:'], DEFAULT_REDIS_URL),
    redisClusterNodes: clusterNodes,
    queueBackend: readQueueBackend(reader, clusterNodes),
    queuePrefix: readPrefix(reader, clusterNodes),
  };
}

function readClusterNodes(reader: EnvReader): RedisClusterNodes {
  return reader.list('REDIS_CLUSTER_NODES').map((item) => {
    const match = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):([0-9]{1,5})$/.exec(item);
    if (!match || Number(match[2]) > 65535) throw new ConfigError('REDIS_CLUSTER_NODES', `entry "${item}" must be host:port`);
    return { host: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2]) };
  });
}

function readQueueBackend(reader: EnvReader, clusterNodes: RedisClusterNodes): QueueBackend {
  const backend = reader.oneOf('QUEUE_BACKEND', QUEUE_BACKENDS, 'redis');
  if (backend === 'postgres' && clusterNodes.length > 0) throw new ConfigError('REDIS_CLUSTER_NODES', 'must be unset with QUEUE_BACKEND=postgres (no Redis is used)');
  return backend;
}

function readPrefix(reader: EnvReader, clusterNodes: RedisClusterNodes): string {
  const queuePrefix = reader.string('QUEUE_PREFIX', 'x402');
  if (!/^[A-Za-z0-9_.{}-]{1,64}$/.test(queuePrefix)) {
    throw new ConfigError('QUEUE_PREFIX', 'may only contain letters, digits, "_", ".", "-", "{" and "}" (at most 64)');
  }
  return clusterNodes.length > 0 && !queuePrefix.includes('{') ? `{${queuePrefix}}` : queuePrefix;
}
