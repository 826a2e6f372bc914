import { loadConfigOrExit } from '@facilitator/config';
import { createLogger } from '@facilitator/logging';
import { buildApi } from './build-api';

const config = loadConfigOrExit();
const logger = createLogger({
  service: 'api',
  level: config.logLevel,
  secrets: [config.treasury.privateKey, ...config.relayers.map((r) => r.privateKey), config.webhookSecret, ...config.apiKeys],
});
const runtime = buildApi(config, logger);
const server = runtime.app.listen(config.port, config.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info('api listening', { url: `http://${config.host}:${port}`, networks: config.networks.map((n) => n.caip2) });
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info('api shutting down', { signal });
  // stop accepting, let in-flight requests finish, then release connections
  server.close(() => {
    void runtime.close().finally(() => process.exit(0));
  });
  server.closeIdleConnections();
  setTimeout(() => process.exit(1), 10_000).unref();
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
