import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type Registry } from 'prom-client';

const REQUEST = 'x402:metrics-request';
const RESPONSE = 'x402:metrics-response';

interface MetricsMessage {
  type: string;
  id: string;
  text?: string;
  error?: string;
}

/**
 * In the cluster primary: answers a process's request for the metrics of all processes, aggregated by
 * prom-client's AggregatorRegistry (whichever process a scrape lands on, it reports the whole API).
 */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: MetricsMessage) => {
    if (message?.type !== REQUEST) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: RESPONSE, id: message.id, text }),
      (err: Error) => worker.send({ type: RESPONSE, id: message.id, error: err.message }),
    );
  });
}

/** The text a /metrics scrape answers with: this process's registry, or the cluster's when clustered. */
export function metricsText(registry: Registry): Promise<string> {
  if (!cluster.isWorker || !process.send) return registry.metrics();
  AggregatorRegistry.setRegistries([registry]);
  const id = randomUUID();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error('cluster metrics timed out'));
    }, 5_000);
    const onMessage = (message: MetricsMessage) => {
      if (message?.type !== RESPONSE || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      if (message.error) reject(new Error(message.error));
      else resolve(message.text ?? '');
    };
    process.on('message', onMessage);
    process.send!({ type: REQUEST, id });
  });
}
