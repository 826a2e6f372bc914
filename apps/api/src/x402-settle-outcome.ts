import type { Settlement } from '@facilitator/db';
import type { UnsentSettlementStop } from '@facilitator/settlement';
import { isFinalOrSent, isFinalProgress, type SettlementProgress, type SettlementWaiter } from './settlement-waiter';

export interface X402SettleOutcomeDeps {
  waits: Pick<SettlementWaiter, 'waitForFinal' | 'waitUntil' | 'readNow'>;
  stop: Pick<UnsentSettlementStop, 'stop'>;
  /** SETTLE_SEND_DEADLINE_MS: from the request's arrival, how long a settlement may take to sign its transaction */
  sendDeadlineMs: number;
  /** once the worker has claimed it for sending, how much longer to wait for its hash (default 10 s) */
  claimedGraceMs?: number;
}

const STOP_REASON = 'nothing was sent before the settle request had to be answered; the settlement was stopped';

/**
 * What an x402 settle answers (docs/decisions.md, "A pending settle answer has a hash"): the final outcome;
 * else `settlement_pending` with the hash of the transaction that will settle it, which `@x402/core`'s
 * resource server retries once (it retries only a pending answer that names a transaction); never a
 * pending answer without a hash that could later settle. A settlement that has signed nothing by the
 * deadline is stopped before anything is sent (UnsentSettlementStop) and answered as failed, so no
 * payment the resource server was told had failed moves money afterwards.
 */
export async function x402SettleOutcome(deps: X402SettleOutcomeDeps, settlement: Settlement, arrivedAt: number): Promise<SettlementProgress> {
  let progress = await deps.waits.waitForFinal(settlement);
  if (isFinalOrSent(progress)) return progress;
  // not final yet: keep the request until its transaction exists, within the deadline
  progress = await deps.waits.waitUntil(progress, isFinalOrSent, arrivedAt + deps.sendDeadlineMs - Date.now());
  if (isFinalOrSent(progress)) return progress;
  // the last look before stopping it (the poller's reading may be a tick old, or there was no room to wait)
  progress = (await deps.waits.readNow(settlement.id)) ?? progress;
  if (isFinalOrSent(progress)) return progress;
  const stopped = await deps.stop.stop(settlement.id, STOP_REASON);
  if (stopped) return { settlement: stopped, transactionHash: null };
  // the worker claimed it first: its transaction is being signed right now, so its hash is moments away
  progress = await deps.waits.waitUntil(progress, isFinalOrSent, deps.claimedGraceMs ?? 10_000);
  return isFinalProgress(progress) || progress.transactionHash ? progress : ((await deps.waits.readNow(settlement.id)) ?? progress);
}
