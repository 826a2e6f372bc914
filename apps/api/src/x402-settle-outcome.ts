import type { Settlement, SettlementRequestStore } from '@facilitator/db';
import { paidElsewhereConfirming, STOPPABLE_STATES, type UnsentSettlementStop } from '@facilitator/settlement';
import { isFinalOrSent, isFinalProgress, type SettlementProgress, type SettlementWaiter } from './settlement-waiter';

export interface X402SettleOutcomeDeps {
  waits: Pick<SettlementWaiter, 'waitUntil' | 'readNow' | 'timeoutMs' | 'enter'>;
  stop: Pick<UnsentSettlementStop, 'stop'>;
  /** SettlementRequestStore.withholdTransfer: a sequential settlement's transfer, not committed to yet, is never sent */
  transfers: Pick<SettlementRequestStore, 'withholdTransfer'>;
  /**
   * SETTLE_MAX_HOLD_MS: from the request's arrival, the longest it is held for a settlement to sign its
   * transaction (a first request), or for the transaction to be mined (a repeat of one already signed)
   */
  maxHoldMs: number;
  /**
   * after the hold, while the worker sends what comes before the payment's own transaction (the sequential
   * fee it claimed, a wallet deployment), how much longer to wait for that transaction's hash (default 10 s)
   */
  claimedGraceMs?: number;
  /** told of each settlement this request stopped (the metric x402_settlements_stopped_total) */
  onStopped?(settlement: Settlement): void;
}

/**
 * After a stop lost to the worker's claim: on the atomic path the signing it claimed for takes milliseconds; on
 * the sequential path the transfer is signed once the fee is mined (a block).
 */
const CLAIMED_GRACE_MS = 10_000;
/**
 * After the worker won the race for a sequential transfer (it committed to signing it just as we withheld it):
 * signing and storing it takes milliseconds, unless its worker dies in between (then pending without a hash).
 */
const COMMITTED_TRANSFER_GRACE_MS = 5_000;
/** Stops tried after the hold, at most: one per state the worker can still leave stoppable (a deployment done). */
const MAX_STOP_TRIES = 5;

const STOP_REASON = 'nothing was sent before the settle request had to be answered; the settlement was stopped';

/**
 * What an x402 settle answers (docs/decisions.md, "A pending settle answer has a hash"): the final outcome;
 * else `settlement_pending` with the hash of the transaction that will settle it, which `@x402/core`'s
 * resource server retries once (it retries only a pending answer that names a transaction); never a
 * pending answer without a hash that could later settle. A settlement that has signed nothing by the
 * deadline is stopped before anything is sent (UnsentSettlementStop) and answered as failed, so no
 * payment the resource server was told had failed moves money afterwards.
 */
export async function x402SettleOutcome(
  deps: X402SettleOutcomeDeps,
  admitted: { settlement: Settlement; created: boolean },
  arrivedAt: number,
  /** x402 v2's middleware retries a pending answer; v1's (x402-express 1.x) does not, so v1 is held for the outcome */
  clientRetriesPending = true,
): Promise<X402SettleAnswer> {
  const { settlement } = admitted;
  const enough = clientRetriesPending ? isFinalOrSent : isFinalProgress;
  // every wait ends within the hold (+ the claimed grace): the client gives up at its own timeout, after which
  // a pending answer would refuse a buyer whose payment still goes through
  const holdLeft = () => arrivedAt + deps.maxHoldMs - Date.now();
  // a repeat of a payment whose transaction is signed already (the middleware's retry of a pending answer)
  // reconciles with it: held until it is mined, as the reference facilitator waits for its receipt
  const known = admitted.created ? undefined : await deps.waits.readNow(settlement.id);
  if (known?.transactionHash && !isFinalProgress(known)) return deps.waits.waitUntil(known, isFinalProgress, holdLeft());
  let progress = known ?? { settlement, transactionHash: null };
  progress = await deps.waits.waitUntil(progress, isFinalProgress, Math.min(deps.waits.timeoutMs, holdLeft()));
  if (enough(progress)) return progress;
  // not final yet: keep the request until its transaction exists (v1: until the outcome), within the hold
  progress = await deps.waits.waitUntil(progress, enough, holdLeft());
  if (isFinalOrSent(progress)) return progress;
  // the last look before stopping it (the poller's reading may be a tick old, or there was no room to wait)
  progress = (await deps.waits.readNow(settlement.id)) ?? progress;
  if (isFinalOrSent(progress)) return progress;
  // answered only once its outcome can no longer change: stopped before anything of it is sent, or held while
  // the worker sends what comes before the payment's own transaction (its claimed fee, a wallet deployment;
  // neither may be named) until that transaction is signed. A settlement that becomes stoppable meanwhile (its
  // wallet deployed, back before its fee) is stopped then.
  const until = holdLeft() + (deps.claimedGraceMs ?? CLAIMED_GRACE_MS) + Date.now();
  for (let tries = 0; tries < MAX_STOP_TRIES; tries++) {
    const stopped = await deps.stop.stop(settlement.id, STOP_REASON);
    if (stopped?.stoppedNow) deps.onStopped?.(stopped.settlement);
    if (stopped) return { settlement: stopped.settlement, transactionHash: null };
    // the worker claimed it first (or it is deploying a wallet): read again, then wait for the hash or a stoppable state
    progress = (await deps.waits.readNow(settlement.id)) ?? progress;
    if (!isFinalOrSent(progress) && !stoppable(progress)) progress = await deps.waits.waitUntil(progress, (p) => isFinalOrSent(p) || stoppable(p), until - Date.now());
    if (isFinalOrSent(progress) || !stoppable(progress)) break;
  }
  if (isFinalOrSent(progress)) return progress;
  // a sequential settlement whose fee went first (in flight, or awaiting its confirmations) and whose transfer is
  // still unsigned: withheld, the transfer is never sent and the request is answered failed (the fee the
  // worker claimed is kept). Never answered pending without a hash, which the middleware refuses while the
  // payer would be charged later (docs/decisions/settlement.md, "An answered request's transfer is never sent").
  if (await deps.transfers.withholdTransfer(settlement.id)) return { ...progress, transferWithheld: true };
  // the worker committed to the transfer first: its hash comes in milliseconds
  progress = (await deps.waits.readNow(settlement.id)) ?? progress;
  if (!isFinalOrSent(progress) && progress.settlement.transferDecision === 'send') {
    progress = await deps.waits.waitUntil(progress, isFinalOrSent, COMMITTED_TRANSFER_GRACE_MS);
  }
  // still nothing signed (its worker crashed between the claim and the send, or its batch cannot be sent):
  // the one answer left is pending without a hash (docs/decisions.md); the lookup follows it
  return isFinalOrSent(progress) ? progress : ((await deps.waits.readNow(settlement.id)) ?? progress);
}

/**
 * What an x402 settle request answers: the settlement's progress, or `transferWithheld` when the request could
 * wait no longer and withheld the transfer of a sequential settlement (answered failed; the payer is never charged).
 */
export type X402SettleAnswer = SettlementProgress & { transferWithheld?: true };

/**
 * Whether a stop could still end it: in a state that sends nothing, not claimed by the worker for sending, and
 * not already paid by someone else's transaction (waiting for its confirmations: held for that outcome).
 */
function stoppable(progress: SettlementProgress): boolean {
  const { settlement } = progress;
  return STOPPABLE_STATES.includes(settlement.state) && !settlement.sendClaimedAt && !paidElsewhereConfirming(settlement);
}
