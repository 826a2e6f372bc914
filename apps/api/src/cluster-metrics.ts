import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type Registry } from 'prom-client';

// Our own small protocol rather than prom-client's built-in one: its worker side listens only once an
// AggregatorRegistry is constructed in the worker, which is easy to miss (the scrape then times out).
const SCRAPE_REQUEST = 'x402:metrics-scrape';
const SCRAPE_RESPONSE = 'x402:metrics-scrape-response';
const COLLECT_REQUEST = 'x402:metrics-collect';
const COLLECT_RESPONSE = 'x402:metrics-collect-response';
const COLLECT_TIMEOUT_MS = 4_000;

type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

interface MetricsMessage {
  type: string;
  id: string;
  text?: string;
  metrics?: MetricsJson;
  error?: string;
}

/**
 * In the cluster primary: answers a process's scrape with the metrics of all processes. It asks every
 * connected process for its registry as JSON and merges them with prom-client's aggregation (counters and
 * histograms summed, gauges by their declared aggregator), so whichever process a scrape lands on, it
 * reports the whole API.
 */
export function serveClusterMetrics(): void {
  const pending = new Map<string, (message: MetricsMessage) => void>();
  cluster.on('message', (worker: Worker, message: MetricsMessage) => {
    if (message?.type === COLLECT_RESPONSE) pending.get(message.id)?.(message);
    if (message?.type !== SCRAPE_REQUEST) return;
    collectAll(pending).then(
      (text) => sendIfConnected(worker, { type: SCRAPE_RESPONSE, id: message.id, text }),
      (err: Error) => sendIfConnected(worker, { type: SCRAPE_RESPONSE, id: message.id, error: err.message }),
    );
  });
}

async function collectAll(pending: Map<string, (message: MetricsMessage) => void>): Promise<string> {
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && w.isConnected());
  const registries = await Promise.all(
    workers.map(
      (worker) =>
        new Promise<MetricsJson>((resolve, reject) => {
          const id = randomUUID();
          const timer = setTimeout(() => {
            pending.delete(id);
            reject(new Error(`api process ${worker.process.pid} did not report its metrics within ${COLLECT_TIMEOUT_MS} ms`));
          }, COLLECT_TIMEOUT_MS);
          pending.set(id, (message) => {
            clearTimeout(timer);
            pending.delete(id);
            if (message.error) reject(new Error(`api process ${worker.process.pid}: ${message.error}`));
            else resolve(message.metrics ?? []);
          });
          worker.send({ type: COLLECT_REQUEST, id });
        }),
    ),
  );
  return AggregatorRegistry.aggregate(registries).metrics();
}

function sendIfConnected(worker: Worker, message: MetricsMessage): void {
  if (worker.isConnected()) worker.send(message);
}

/**
 * The text a /metrics scrape answers with: this process's registry, or, in a cluster worker, the whole
 * cluster's (asked of the primary). In a cluster worker it also starts answering the primary's collection
 * requests with this registry.
 */
export function metricsSource(registry: Registry): () => Promise<string> {
  if (!cluster.isWorker || !process.send) return () => registry.metrics();
  process.on('message', (message: MetricsMessage) => {
    if (message?.type !== COLLECT_REQUEST) return;
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: COLLECT_RESPONSE, id: message.id, metrics }),
      (err: Error) => process.send?.({ type: COLLECT_RESPONSE, id: message.id, error: err.message }),
    );
  });
  return () => askPrimary();
}

function askPrimary(): Promise<string> {
  const id = randomUUID();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error('cluster metrics timed out'));
    }, COLLECT_TIMEOUT_MS + 1_000);
    const onMessage = (message: MetricsMessage) => {
      if (message?.type !== SCRAPE_RESPONSE || message.id !== id) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      if (message.error) reject(new Error(`cluster metrics: ${message.error}`));
      else resolve(message.text ?? '');
    };
    process.on('message', onMessage);
    process.send!({ type: SCRAPE_REQUEST, id });
  });
}
