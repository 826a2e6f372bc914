import type { WorkerProcessConfig } from '@facilitator/config';
import { SharedReadings } from '@facilitator/core';
import type { Metrics } from '@facilitator/metrics';
import type { RelayerFunds, SettlementWaitReason } from '@facilitator/settlement';

/** A relayer's balance is read at most this often: not once per transfer, yet soon after it is drained or refunded. */
const BALANCE_MAX_AGE_MS = 1_000;
/** A settlement not seen waiting again within this long has moved on, or another worker holds it. */
const WAITING_SEEN_WITHIN_MS = 30_000;

/** The relayers' native balances against RELAYER_MIN_BALANCE_<chainId>, with the dry alert metric. */
export function relayerFunds(
  config: WorkerProcessConfig,
  providers: ReadonlyMap<number, { getBalance(address: string): Promise<bigint> }>,
  metrics: Metrics,
): RelayerFunds {
  const readings = new SharedReadings<string, bigint>();
  const minimums = new Map(config.networks.map((n) => [n.chainId, n.relayerMinBalance]));
  const caip2 = new Map(config.networks.map((n) => [n.chainId, n.caip2]));
  return {
    balanceOf: (chainId, relayer) => readings.get(`${chainId}:${relayer}`, BALANCE_MAX_AGE_MS, () => providers.get(chainId)!.getBalance(relayer)),
    minimum: (chainId) => minimums.get(chainId) ?? 0n,
    onReading: (chainId, relayer, dry) => metrics.relayerDry.set({ chain: caip2.get(chainId) ?? String(chainId), address: relayer }, dry ? 1 : 0),
  };
}

/** The settlements this process found waiting for the chain, for the x402_settlements_waiting gauge. */
export class WaitingSettlements {
  private readonly seen = new Map<string, { reason: SettlementWaitReason; at: number }>();

  waiting(settlementId: string, reason: SettlementWaitReason): void {
    this.seen.set(settlementId, { reason, at: Date.now() });
  }

  movedOn(settlementId: string): void {
    this.seen.delete(settlementId);
  }

  countsByReason(): Map<string, number> {
    const counts = new Map<string, number>();
    const cutoff = Date.now() - WAITING_SEEN_WITHIN_MS;
    for (const [id, { reason, at }] of this.seen) {
      if (at < cutoff) this.seen.delete(id);
      else counts.set(reason, (counts.get(reason) ?? 0) + 1);
    }
    return counts;
  }
}
