import { exitOnConfigError, loadWorkerConfig } from '@facilitator/config';
import { createLogger } from '@facilitator/logging';
import { buildWorker } from './build-worker';
import { keyPowers } from './key-powers';

const config = exitOnConfigError(() => loadWorkerConfig());
const logger = createLogger({
  service: 'worker',
  level: config.logLevel,
  // RPC URLs too: providers put API keys in them
  secrets: [...(config.treasury ? [config.treasury.privateKey] : []), ...config.relayers.map((r) => r.privateKey), config.webhookSecret, ...config.networks.flatMap((n) => n.rpcUrls)],
});

let runtime: ReturnType<typeof buildWorker>;
try {
  runtime = buildWorker(config, logger);
} catch (err) {
  logger.error('worker failed to start', { err: (err as Error).message });
  process.exit(1);
}
logger.info('worker started', { queues: config.worker.queues, networks: config.networks.map((n) => n.caip2) });
for (const key of keyPowers(config)) logger.info('signing key', key);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info('worker draining', { signal });
  // bounded, whatever a job is waiting on: unfinished work keeps its persisted state and is resumed elsewhere
  setTimeout(() => {
    logger.warn('worker exiting with jobs still running; they will be resumed');
    process.exit(0);
  }, config.worker.shutdownTimeoutMs + 3_000).unref();
  await runtime.close();
  logger.info('worker stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
