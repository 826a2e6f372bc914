import { SETTLEMENT_WAIT_REASONS, type RpcEndpointSnapshot } from '@facilitator/core';
import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { QUEUE_STATES, snapshotQueue } from './queue-depth';

export interface KeyBalance {
  chain: string;
  address: string;
  role: 'treasury' | 'relayer';
  native: bigint;
  token: bigint;
}

/** Where the gauges read their values at scrape time. */
interface MetricSources {
  queues?: readonly Queue[];
  balances?: () => Promise<KeyBalance[]>;
  /** settlements parked for an operator (money state unknown after their job gave up) */
  needingAttention?: () => Promise<number>;
  /** every RPC endpoint of every enabled network */
  rpcEndpoints?: () => RpcEndpointSnapshot[];
  /** settlements this worker process found waiting for the chain, by reason */
  waitingSettlements?: () => ReadonlyMap<string, number>;
  /** transactions whose outcome this worker process awaits outside any job slot (their settlements' jobs are delayed) */
  awaitedTransactions?: () => number;
  /** settle requests this API process holds open while their settlement goes on (the shared poller's clients) */
  settleRequestsWaiting?: () => number;
}

/**
 * Every Prometheus series of ours, in one place (names are a public contract: dashboards read them).
 * One registry per process; the API's cluster primary aggregates its processes' registries.
 */
export function createMetrics(service: 'api' | 'worker', sources: MetricSources = {}, registry = new Registry()) {
  const balances = sources.balances;
  registry.setDefaultLabels({ service });
  // prom-client's names already start with process_ / nodejs_: the prefix only namespaces them (x402_process_cpu_seconds_total)
  collectDefaultMetrics({ register: registry, prefix: 'x402_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'x402_http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'x402_http_request_duration_seconds',
      help: 'HTTP request latency by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    verifications: new Counter({
      name: 'x402_verifications_total',
      help: 'Verifications by result (verified or rejected) and failure reason',
      labelNames: ['result', 'reason'] as const,
      registers: [registry],
    }),
    settlements: new Counter({
      name: 'x402_settlements_total',
      help: 'Settlements that reached a final state, by state and error code',
      labelNames: ['state', 'error_code'] as const,
      registers: [registry],
    }),
    settlementsStopped: new Counter({
      name: 'x402_settlements_stopped_total',
      help: 'Settlements stopped before anything was sent, because an /x402/settle request could not be held longer (SETTLE_MAX_HOLD_MS): a slow or stopped worker',
      registers: [registry],
    }),
    settlementDuration: new Histogram({
      name: 'x402_settlement_duration_seconds',
      help: 'Time from the settle request to settled',
      buckets: [0.25, 0.5, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144],
      registers: [registry],
    }),
    feesCollected: new Counter({
      name: 'x402_fees_collected_total',
      help: 'Settlement fees collected from merchants (count)',
      registers: [registry],
    }),
    feeUnitsCollected: new Counter({
      name: 'x402_fee_units_collected_total',
      help: 'Settlement fees collected from merchants, in token units',
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'x402_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed; held: not sent, the receiver at its cap or its breaker open, no attempt counted)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    queueJobs: new Gauge({
      name: 'x402_queue_jobs',
      help: 'Jobs per queue and state',
      labelNames: ['queue', 'state'] as const,
      registers: [registry],
      // every process reports the same shared Redis numbers: aggregate by taking one, not the sum
      aggregator: 'max',
      async collect() {
        for (const snapshot of await Promise.all((sources.queues ?? []).map(snapshotQueue))) {
          for (const state of QUEUE_STATES) this.set({ queue: snapshot.name, state }, snapshot.counts[state]);
        }
      },
    }),
    settlementsNeedingAttention: new Gauge({
      name: 'x402_settlements_needing_attention',
      help: 'Settlements parked for an operator: their job gave up with the money state unknown (see /v1/queues)',
      registers: [registry],
      // read from Postgres, the same number in every process
      aggregator: 'max',
      async collect() {
        if (sources.needingAttention) this.set(await sources.needingAttention());
      },
    }),
    relayerNativeBalance: new Gauge({
      name: 'x402_relayer_native_balance_wei',
      help: 'Native (gas) balance of each sending key: a relayer running dry shows here before it fails',
      labelNames: ['chain', 'address', 'role'] as const,
      registers: [registry],
      aggregator: 'max',
      async collect() {
        for (const b of (await balances?.()) ?? []) this.set({ chain: b.chain, address: b.address, role: b.role }, Number(b.native));
      },
    }),
    rpcEndpointUp: new Gauge({
      name: 'x402_rpc_endpoint_up',
      help: 'Whether an RPC endpoint (by position in RPC_URL_<chainId>) answers: 1 up, 0 down and skipped until it answers a probe',
      labelNames: ['chain', 'endpoint'] as const,
      registers: [registry],
      // any process that finds it down says so
      aggregator: 'min',
      collect() {
        for (const e of sources.rpcEndpoints?.() ?? []) this.set({ chain: `eip155:${e.chainId}`, endpoint: e.endpoint }, e.up ? 1 : 0);
      },
    }),
    rpcEndpointCalls: new Counter({
      name: 'x402_rpc_endpoint_calls_total',
      help: 'RPC calls per endpoint by outcome: answered (a JSON-RPC error included) or failed (refused, timed out, 429/5xx)',
      labelNames: ['chain', 'endpoint', 'outcome'] as const,
      registers: [registry],
      collect() {
        // the pool keeps the running totals; a counter is set to them by resetting and adding
        this.reset();
        for (const e of sources.rpcEndpoints?.() ?? []) {
          const chain = `eip155:${e.chainId}`;
          this.inc({ chain, endpoint: e.endpoint, outcome: 'answered' }, e.answered);
          this.inc({ chain, endpoint: e.endpoint, outcome: 'failed' }, e.failed);
        }
      },
    }),
    rpcEndpointLatency: new Gauge({
      name: 'x402_rpc_endpoint_latency_ms',
      help: 'Moving average latency of answered calls per RPC endpoint',
      labelNames: ['chain', 'endpoint'] as const,
      registers: [registry],
      aggregator: 'max',
      collect() {
        for (const e of sources.rpcEndpoints?.() ?? []) this.set({ chain: `eip155:${e.chainId}`, endpoint: e.endpoint }, e.latencyMs);
      },
    }),
    relayerDry: new Gauge({
      name: 'x402_relayer_dry',
      help: 'Alert: 1 when a relayer\'s native balance was below RELAYER_MIN_BALANCE_<chainId> at its last reading (it is skipped), else 0',
      labelNames: ['chain', 'address'] as const,
      registers: [registry],
      aggregator: 'max',
    }),
    settlementsWaiting: new Gauge({
      name: 'x402_settlements_waiting',
      help: `Settlements waiting in their state for the chain, by reason (${SETTLEMENT_WAIT_REASONS.join(', ')})`,
      labelNames: ['reason'] as const,
      registers: [registry],
      aggregator: 'sum',
      collect() {
        this.reset();
        for (const [reason, count] of sources.waitingSettlements?.() ?? []) this.set({ reason }, count);
      },
    }),
    transactionsAwaited: new Gauge({
      name: 'x402_settlement_transactions_awaited',
      help: 'Sent transactions (fees, transfers, wallet deployments, settle batches) whose outcome this worker awaits; their settlements hold no job slot meanwhile',
      registers: [registry],
      aggregator: 'sum',
      collect() {
        if (sources.awaitedTransactions) this.set(sources.awaitedTransactions());
      },
    }),
    settleRequestsWaiting: new Gauge({
      name: 'x402_settle_requests_waiting',
      help: 'Settle requests held open right now while their settlement goes on (bounded by SETTLE_MAX_WAITERS per API process)',
      registers: [registry],
      aggregator: 'sum',
      collect() {
        if (sources.settleRequestsWaiting) this.set(sources.settleRequestsWaiting());
      },
    }),
    settlementWaits: new Counter({
      name: 'x402_settlement_waits_total',
      help: 'Times a settlement was found unable to go on and delayed, by reason',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    relayerTokenBalance: new Gauge({
      name: 'x402_relayer_token_balance_units',
      help: 'Token balance of each sending key',
      labelNames: ['chain', 'address', 'role'] as const,
      registers: [registry],
      aggregator: 'max',
      async collect() {
        for (const b of (await balances?.()) ?? []) this.set({ chain: b.chain, address: b.address, role: b.role }, Number(b.token));
      },
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
