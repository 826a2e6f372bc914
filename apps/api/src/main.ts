import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { answerClientErrorsInTheirShape } from './http-client-errors';
import { exitOnConfigError, loadApiConfig } from '@facilitator/config';
import { createLogger } from '@facilitator/logging';
import { buildApi } from './build-api';
import { serveClusterMetrics } from './cluster-metrics';

const config = exitOnConfigError(() => loadApiConfig());
const logger = createLogger({
  service: 'api',
  level: config.logLevel,
  // RPC URLs too: providers put API keys in them
  secrets: [config.webhookSecret, ...config.apiKeys, ...config.networks.flatMap((n) => n.rpcUrls)],
});

// Verification is CPU-bound (JSON, hashing, signature recovery): one process per core shares the port.
if (config.apiProcesses > 1 && cluster.isPrimary) {
  runPrimary();
} else {
  runServer();
}

function runPrimary(): void {
  let stopping = false;
  serveClusterMetrics();
  for (let i = 0; i < config.apiProcesses; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.error('api process exited; starting another', { pid: worker.process.pid, code, signal });
    cluster.fork();
  });
  const stop = (signal: string) => {
    stopping = true;
    logger.info('api shutting down', { signal });
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    const exit = () => Object.keys(cluster.workers ?? {}).length === 0 && process.exit(0);
    cluster.on('exit', exit);
    exit();
    setTimeout(() => process.exit(1), 12_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function runServer(): void {
  const runtime = buildApi(config, logger);
  // a deep accept queue (Node's default is 511): a burst of connects beyond it is reset by the kernel
  // before the process ever sees it, which a flood of waiting settle clients would otherwise cause
  const server = createServer(runtime.app).listen({ port: config.port, host: config.host, backlog: 4096 }, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    logger.info('api listening', { url: `http://${config.host}:${port}`, networks: config.networks.map((n) => n.caip2), pid: process.pid });
  });
  answerClientErrorsInTheirShape(server);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('api process shutting down', { signal });
    // stop accepting, let in-flight requests finish, then release connections
    server.close(() => void runtime.close().finally(() => process.exit(0)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}
