import http from 'node:http';
import type { WorkerProcessConfig } from '@facilitator/config';
import type { UsdcClient } from '@facilitator/evm-chain';
import { SharedReadings } from '@facilitator/core';
import type { KeyBalance, Metrics } from '@facilitator/metrics';
import type { Logger } from '@facilitator/logging';
import type { SettlementTransitionEvent } from '@facilitator/settlement';

/** Balances of the treasury and relayer keys on every network, read at most every 15 s. */
export function keyBalances(config: WorkerProcessConfig, relayers: readonly string[], clients: ReadonlyMap<number, UsdcClient>): () => Promise<KeyBalance[]> {
  // the treasury by address: its balances are read whether or not this worker holds its key
  const keys = [
    { address: config.treasuryAddress, role: 'treasury' as const },
    ...relayers.filter((address) => address !== config.treasuryAddress).map((address) => ({ address, role: 'relayer' as const })),
  ];
  // scrapes within 15 s share one reading (each is several RPC calls per key and network)
  const readings = new SharedReadings<'balances', KeyBalance[]>();
  return () => readings.get('balances', 15_000, async () => {
    const reads = config.networks.flatMap((network) => {
      const usdc = clients.get(network.chainId)!;
      return keys.map(async (key) => ({
        chain: network.caip2,
        address: key.address,
        role: key.role,
        native: await usdc.provider.getBalance(key.address),
        token: await usdc.balanceOf(key.address),
      }));
    });
    return Promise.all(reads);
  });
}

/** Counts fees and final states, and times request-to-settled, from the state machine's transitions. */
export function recordTransition(metrics: Metrics, event: SettlementTransitionEvent): void {
  if (event.to === 'fee_collected') {
    metrics.feesCollected.inc();
    metrics.feeUnitsCollected.inc(Number(event.settlement.feeAmount));
  }
  if (event.to === 'settled' || event.to === 'failed') {
    const code = event.to === 'failed' ? String((event.note?.error as string | undefined) ?? 'unknown') : 'none';
    metrics.settlements.inc({ state: event.to, error_code: code });
  }
  if (event.to === 'settled') metrics.settlementDuration.observe((Date.now() - event.settlement.createdAt.getTime()) / 1000);
}

/** A small HTTP listener for Prometheus on WORKER_METRICS_PORT. */
export function serveWorkerMetrics(metrics: Metrics, port: number, logger: Logger): http.Server {
  const server = http.createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  });
  server.listen(port, () => logger.info('worker metrics listening', { port: (server.address() as { port: number }).port }));
  return server;
}
