import { networkByChainId, type RpcEndpointSnapshot } from '@facilitator/core';
import type { SettlementPages, StatusWindow, VerificationRepository, WaitingCount, WindowLatency, WindowSettleOutcomes } from '@facilitator/db';
import type { NetworkStatus, ServiceStatus } from '@facilitator/schemas';
import { SingleFlightCache } from './single-flight-cache';

/** The windows of the page: the last 5 minutes, hour and day. */
const STATUS_WINDOWS = [
  { name: '5m', seconds: 300 },
  { name: '1h', seconds: 3_600 },
  { name: '24h', seconds: 86_400 },
] as const satisfies readonly StatusWindow[];
type WindowName = (typeof STATUS_WINDOWS)[number]['name'];

/**
 * The hour and the day are recomputed at most this often: their queries read up to a day of rows (measured:
 * 0.64 s for 860k verifications in the day), which every few seconds would cost a core's share; a minute
 * moves a day's percentile little.
 */
export const LONG_WINDOWS_MAX_AGE_MS = 60_000;
const SHORT_WINDOWS = STATUS_WINDOWS.filter((w) => w.name === '5m');
const LONG_WINDOWS = STATUS_WINDOWS.filter((w) => w.name !== '5m');

interface WindowFigures {
  verify: WindowLatency[];
  settle: WindowSettleOutcomes[];
}

interface StatusNetwork {
  chainId: number;
  caip2: string;
  /** MAX_FEE_PER_GAS_GWEI_<chainId> in wei */
  maxFeePerGas: bigint;
}

export interface ServiceStatusSources {
  networks: readonly StatusNetwork[];
  verifications: Pick<VerificationRepository, 'latencyByWindow'>;
  settlements: Pick<SettlementPages, 'outcomesByWindow' | 'waitingByReason'>;
  /** this process's view of every RPC endpoint */
  rpcEndpoints: () => RpcEndpointSnapshot[];
  /** the latest block's base fee; null (not an error) when no endpoint answers: the RPC health says why */
  baseFeePerGas: (chainId: number) => Promise<bigint | null>;
  /** FEE_AMOUNT, in token units */
  feeAmount: bigint;
  /** how long one computation is served */
  maxAgeMs: number;
  now?: () => number;
}

/**
 * The status page's figures: one computation serves every visitor for `maxAgeMs` (SingleFlightCache), so a
 * thousand visitors a second cost what one does. Each computation runs the 5-minute window's two aggregate
 * queries, the waiting count and a base fee read per network; the hour and day windows come from their own
 * cache, recomputed every LONG_WINDOWS_MAX_AGE_MS (or maxAgeMs, if longer).
 */
export class ServiceStatusReader {
  private readonly cache: SingleFlightCache<ServiceStatus>;
  private readonly longWindows: SingleFlightCache<WindowFigures>;

  constructor(private readonly sources: ServiceStatusSources) {
    this.cache = new SingleFlightCache(() => this.compute(), sources.maxAgeMs, sources.now);
    this.longWindows = new SingleFlightCache(() => this.windowFigures(LONG_WINDOWS), this.longWindowsMaxAgeMs(), sources.now);
  }

  current(): Promise<ServiceStatus> {
    return this.cache.get();
  }

  private longWindowsMaxAgeMs(): number {
    return Math.max(this.sources.maxAgeMs, LONG_WINDOWS_MAX_AGE_MS);
  }

  private async windowFigures(windows: readonly StatusWindow[]): Promise<WindowFigures> {
    const [verify, settle] = await Promise.all([this.sources.verifications.latencyByWindow(windows), this.sources.settlements.outcomesByWindow(windows)]);
    return { verify, settle };
  }

  private async compute(): Promise<ServiceStatus> {
    const { networks, settlements } = this.sources;
    const [short, long, waiting, baseFees] = await Promise.all([
      this.windowFigures(SHORT_WINDOWS),
      this.longWindows.get(),
      settlements.waitingByReason(),
      Promise.all(networks.map((n) => this.sources.baseFeePerGas(n.chainId).catch(() => null))),
    ]);
    const verify = [...short.verify, ...long.verify];
    const settle = [...short.settle, ...long.settle];
    const endpoints = this.sources.rpcEndpoints();
    return {
      computed_at: new Date((this.sources.now ?? Date.now)()).toISOString(),
      max_age_seconds: this.sources.maxAgeMs / 1000,
      windows: STATUS_WINDOWS.map((w) => w.name),
      window_max_age_seconds: byWindow((w) => (w === '5m' ? this.sources.maxAgeMs : this.longWindowsMaxAgeMs()) / 1000),
      networks: networks.map((network, i) => ({
        network: network.caip2,
        name: networkByChainId(network.chainId)?.label ?? network.caip2,
        chain_id: network.chainId,
        verify: byWindow((w) => latencyOf(verify.find((r) => r.chainId === network.chainId && r.window === w))),
        settle: byWindow((w) => outcomesOf(settle.find((r) => r.chainId === network.chainId && r.window === w))),
        waiting: waitingOf(waiting.filter((r) => r.chainId === network.chainId)),
        rpc: rpcOf(endpoints.filter((e) => e.chainId === network.chainId)),
        fee: {
          facilitator_fee_units: this.sources.feeAmount.toString(),
          base_fee_per_gas_wei: baseFees[i]?.toString() ?? null,
          max_fee_per_gas_cap_wei: network.maxFeePerGas.toString(),
          gas_above_cap: baseFees[i] == null ? null : baseFees[i] > network.maxFeePerGas,
        },
      })),
    };
  }
}

function byWindow<T>(of: (window: WindowName) => T): Record<WindowName, T> {
  return { '5m': of('5m'), '1h': of('1h'), '24h': of('24h') };
}

function latencyOf(row: WindowLatency | undefined): NetworkStatus['verify']['5m'] {
  return { count: row?.count ?? 0, p50_ms: row?.p50Ms ?? null, p95_ms: row?.p95Ms ?? null };
}

function outcomesOf(row: WindowSettleOutcomes | undefined): NetworkStatus['settle']['5m'] {
  const settled = row?.count ?? 0;
  const failed = row?.failed ?? 0;
  return {
    settled,
    failed,
    success_rate: settled + failed === 0 ? null : settled / (settled + failed),
    p50_ms: row?.p50Ms ?? null,
    p95_ms: row?.p95Ms ?? null,
  };
}

function waitingOf(rows: WaitingCount[]): NetworkStatus['waiting'] {
  const byReason = [...rows].sort((a, b) => a.reason.localeCompare(b.reason));
  return {
    total: rows.reduce((sum, r) => sum + r.count, 0),
    by_reason: byReason.map((r) => ({ reason: r.reason, count: r.count, oldest_since: r.oldestSince?.toISOString() ?? null })),
  };
}

function rpcOf(endpoints: RpcEndpointSnapshot[]): NetworkStatus['rpc'] {
  return {
    up: endpoints.filter((e) => e.up).length,
    total: endpoints.length,
    endpoints: endpoints.map((e) => ({ endpoint: e.endpoint, up: e.up, latency_ms: Math.round(e.latencyMs * 10) / 10, answered: e.answered, failed: e.failed })),
  };
}
