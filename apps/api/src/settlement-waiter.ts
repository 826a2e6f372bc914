import type { Settlement } from '@facilitator/db';
import { RateLimitedError } from '@facilitator/core';
import { isFinal } from '@facilitator/settlement';

/** A settlement as a waiting request sees it: its row, and the hash of its newest transaction on its way. */
export interface SettlementProgress {
  settlement: Settlement;
  /**
   * the transaction that moves the payer's money: its transfer (sequential path) or its batch's settle
   * transaction (atomic path); null until it is signed (a sequential fee or a wallet deployment is never named)
   */
  transactionHash: string | null;
}

export interface SettlementWaiterOptions {
  /** reads the current progress of these settlements (one round of queries for all of them) */
  readProgress(ids: string[]): Promise<SettlementProgress[]>;
  /** how long one settle request waits for its outcome (SETTLE_WAIT_TIMEOUT_MS) */
  timeoutMs: number;
  /** waits at once in this process; beyond it a request is answered with what it has at once (SETTLE_MAX_WAITERS) */
  maxWaiters: number;
  /**
   * requests waiting at once for one settlement in this process (default 64; the x402 middleware's flow needs
   * two); one more is refused with 429, so repeats of a few stuck payments cannot take the room of everyone else's
   */
  maxWaitersPerSettlement?: number;
  /**
   * waits at once for one merchant's settlements in this process (default half of `maxWaiters`): beyond it, that
   * merchant's next request is answered with what it has at once, as beyond `maxWaiters`, so one merchant's
   * waiting requests (or a stranger's, paying one payTo) cannot take every other merchant's room to wait
   */
  maxWaitersPerMerchant?: number;
  /**
   * how often the one poller of this process reads every waited-for settlement (one round for all of
   * them, and only while some request waits) when nothing wakes it: without `wakeups`, or while their
   * connection is away; default 20 ms: on the atomic path a paid request waits for one block, and the
   * poll's delay is part of every paid request's latency
   */
  pollIntervalMs?: number;
  /**
   * Postgres's notifications of the settlements' progress (SettlementProgressListener): while they are live,
   * a waited-for settlement is read when it changed, in one round per wake-up for all that did, and the
   * poller only looks at every waited-for settlement every `safetyPollIntervalMs`
   */
  wakeups?: ProgressWakeups;
  /** the slow look at everything while `wakeups` are live, in case one was missed (default 2 s) */
  safetyPollIntervalMs?: number;
}

/** What SettlementProgressListener offers the waiter (a port, so the waiter's unit tests need no database). */
export interface ProgressWakeups {
  readonly live: boolean;
  onWake(handler: (wake: { settlementIds: string[]; batchSigned: boolean }) => void): void;
  onLive(handler: (live: boolean) => void): void;
}

export const isFinalProgress = (p: SettlementProgress): boolean => isFinal(p.settlement.state);

/** Final, or with the transaction that will settle it signed (so a pending answer can name it). */
export const isFinalOrSent = (p: SettlementProgress): boolean => isFinalProgress(p) || p.transactionHash !== null;

interface Listener {
  until(p: SettlementProgress): boolean;
  done(p: SettlementProgress): void;
}

interface Watched {
  latest: SettlementProgress;
  listeners: Set<Listener>;
}

/**
 * Settle requests that wait (Form A and /x402) share one reader per process. With Postgres's wake-ups live, a
 * settlement is read when it changed (one round for all the settlements of a wake-up, so a batch is one
 * round), and everything is looked at once every `safetyPollIntervalMs`; without them, every tick reads all
 * settlements being waited for in one round. Either way, however many clients wait and on however many
 * settlements, clients waiting on the same settlement share its entry, Postgres sees at most one round at a
 * time per process, and waiting clients cannot starve the pool. Beyond `maxWaiters` clients, a request does
 * not wait at all: it is answered with what it has.
 */
export class SettlementWaiter {
  private readonly watched = new Map<string, Watched>();
  /** clients waiting per merchant, in this process */
  private readonly waitingByMerchant = new Map<string, number>();
  /** settle requests inside (intake and wait) per payment, in this process */
  private readonly entered = new Map<string, number>();
  private waiting = 0;
  private timer?: NodeJS.Timeout;
  private timerMs = 0;
  /** settlements to read in the next round (woken, or newly watched), and whether to read those not yet sent */
  private readonly dirty = new Set<string>();
  private unsentDirty = false;
  private roundScheduled = false;

  constructor(private readonly options: SettlementWaiterOptions) {
    const wakeups = options.wakeups;
    if (!wakeups) return;
    wakeups.onWake(({ settlementIds, batchSigned }) => {
      let any = false;
      for (const id of settlementIds) {
        if (this.watched.has(id)) {
          this.dirty.add(id);
          any = true;
        }
      }
      if (batchSigned && this.watched.size > 0) {
        this.unsentDirty = true;
        any = true;
      }
      if (any) this.scheduleRound();
    });
    wakeups.onLive((live) => {
      if (this.watched.size === 0) return;
      // what changed while the connection was away was not heard: look at everything once, then poll at the pace the connection allows
      if (live) for (const id of this.watched.keys()) this.dirty.add(id);
      this.startPolling();
      this.scheduleRound();
    });
  }

  /** SETTLE_WAIT_TIMEOUT_MS: how long a settle request waits for the outcome before it is answered pending */
  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /**
   * Lets one more settle request for this payment in (its fingerprint, or Form B's verification id), before
   * anything is looked up or stored for it: beyond `maxWaitersPerSettlement` requests at once for the same
   * payment in this process it is refused (429) at once, so a flood of repeats of one payment costs no
   * database work (issue 41, item 4). The returned function lets it out; call it once the request is answered.
   */
  enter(paymentKey: string): () => void {
    const inside = this.entered.get(paymentKey) ?? 0;
    if (inside >= (this.options.maxWaitersPerSettlement ?? 64)) throw new RateLimitedError(1);
    this.entered.set(paymentKey, inside + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const now = (this.entered.get(paymentKey) ?? 1) - 1;
      if (now <= 0) this.entered.delete(paymentKey);
      else this.entered.set(paymentKey, now);
    };
  }

  /** Clients waiting right now in this process. */
  get waiters(): number {
    return this.waiting;
  }

  /** The settlement once final, or the latest progress read when the wait ends (timeout, or no room to wait). */
  waitForFinal(initial: Settlement): Promise<SettlementProgress> {
    return this.waitUntil({ settlement: initial, transactionHash: null }, isFinalProgress, this.options.timeoutMs);
  }

  /** The progress once `until` holds, or the latest read after `timeoutMs` (at once when there is no room to wait). */
  async waitUntil(initial: SettlementProgress, until: (p: SettlementProgress) => boolean, timeoutMs: number): Promise<SettlementProgress> {
    if (until(initial) || this.waiting >= this.options.maxWaiters || timeoutMs <= 0) return initial;
    const merchant = initial.settlement.merchant;
    if ((this.waitingByMerchant.get(merchant) ?? 0) >= this.merchantRoom()) return initial;
    const id = initial.settlement.id;
    if ((this.watched.get(id)?.listeners.size ?? 0) >= (this.options.maxWaitersPerSettlement ?? 64)) throw new RateLimitedError(1);
    this.waiting++;
    this.waitingByMerchant.set(merchant, (this.waitingByMerchant.get(merchant) ?? 0) + 1);
    let entry = this.watched.get(id);
    if (!entry) {
      entry = { latest: initial, listeners: new Set() };
      this.watched.set(id, entry);
      // the caller's row may predate a change that notified nobody yet listening for it: read it once more
      if (this.options.wakeups?.live) {
        this.dirty.add(id);
        this.scheduleRound();
      }
    }
    const watched = entry;
    if (until(watched.latest)) {
      this.release(id, watched, merchant);
      return watched.latest;
    }
    this.startPolling();
    try {
      return await new Promise<SettlementProgress>((resolve) => {
        const listener: Listener = {
          until,
          done: (p) => {
            clearTimeout(timeout);
            watched.listeners.delete(listener);
            resolve(p);
          },
        };
        const timeout = setTimeout(() => listener.done(watched.latest), timeoutMs);
        watched.listeners.add(listener);
      });
    } finally {
      this.release(id, watched, merchant);
    }
  }

  /** One settlement's progress read now, outside the poller (the last look before a decision). */
  async readNow(id: string): Promise<SettlementProgress | undefined> {
    return (await this.options.readProgress([id]))[0];
  }

  private merchantRoom(): number {
    return this.options.maxWaitersPerMerchant ?? Math.max(1, Math.floor(this.options.maxWaiters / 2));
  }

  private release(id: string, watched: Watched, merchant: string): void {
    this.waiting--;
    const left = (this.waitingByMerchant.get(merchant) ?? 1) - 1;
    if (left <= 0) this.waitingByMerchant.delete(merchant);
    else this.waitingByMerchant.set(merchant, left);
    if (watched.listeners.size === 0 && this.watched.get(id) === watched) this.watched.delete(id);
  }

  /** The poller's pace: fast without live wake-ups, a slow safety look with them. */
  private pollMs(): number {
    return this.options.wakeups?.live ? (this.options.safetyPollIntervalMs ?? 2_000) : (this.options.pollIntervalMs ?? 20);
  }

  private startPolling(): void {
    const ms = this.pollMs();
    if (this.timer && this.timerMs === ms) return;
    clearInterval(this.timer);
    this.timerMs = ms;
    this.timer = setInterval(() => void this.poll(), ms);
    this.timer.unref();
  }

  private polling = false;

  private async poll(): Promise<void> {
    if (this.watched.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    await this.read([...this.watched.keys()]);
  }

  /** One round for the settlements woken since the last (coalesced: wake-ups of one moment share a round). */
  private scheduleRound(): void {
    if (this.roundScheduled) return;
    this.roundScheduled = true;
    setImmediate(() => {
      this.roundScheduled = false;
      if (this.polling) {
        // a round is under way: this one follows it, so no change is read before it was notified
        setTimeout(() => this.scheduleRound(), 1).unref();
        return;
      }
      const ids = new Set<string>();
      for (const id of this.dirty) if (this.watched.has(id)) ids.add(id);
      if (this.unsentDirty) for (const [id, entry] of this.watched) if (entry.latest.transactionHash === null) ids.add(id);
      this.dirty.clear();
      this.unsentDirty = false;
      if (ids.size > 0) void this.read([...ids]);
    });
  }

  private async read(ids: string[]): Promise<void> {
    if (this.polling) return; // a slow database: skip a tick rather than pile up queries
    this.polling = true;
    try {
      for (const progress of await this.options.readProgress(ids)) {
        const entry = this.watched.get(progress.settlement.id);
        if (!entry) continue;
        entry.latest = progress;
        for (const listener of [...entry.listeners]) if (listener.until(progress)) listener.done(progress);
      }
    } catch {
      // the database is away: waiters keep their last reading and time out; the next tick tries again
      if (this.options.wakeups?.live) for (const id of ids) this.dirty.add(id);
    } finally {
      this.polling = false;
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
