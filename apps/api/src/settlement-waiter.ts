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
   * how often the one poller of this process reads every waited-for settlement (one round for all of
   * them, and only while some request waits); default 20 ms: on the atomic path a paid request waits for
   * one block, and the poll's delay is part of every paid request's latency
   */
  pollIntervalMs?: number;
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
 * Settle requests that wait (Form A and /x402) share one poller per process: every tick reads all
 * settlements being waited for in one round, however many clients wait and on however many settlements;
 * clients waiting on the same settlement share its entry. So Postgres sees at most one round per tick per
 * process, and waiting clients cannot starve the pool. Beyond `maxWaiters` clients, a request does not
 * wait at all: it is answered with what it has.
 */
export class SettlementWaiter {
  private readonly watched = new Map<string, Watched>();
  private waiting = 0;
  private timer?: NodeJS.Timeout;

  constructor(private readonly options: SettlementWaiterOptions) {}

  /** SETTLE_WAIT_TIMEOUT_MS: how long a settle request waits for the outcome before it is answered pending */
  get timeoutMs(): number {
    return this.options.timeoutMs;
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
    const id = initial.settlement.id;
    if ((this.watched.get(id)?.listeners.size ?? 0) >= (this.options.maxWaitersPerSettlement ?? 64)) throw new RateLimitedError(1);
    this.waiting++;
    let entry = this.watched.get(id);
    if (!entry) {
      entry = { latest: initial, listeners: new Set() };
      this.watched.set(id, entry);
    }
    const watched = entry;
    if (until(watched.latest)) {
      this.release(id, watched);
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
      this.release(id, watched);
    }
  }

  /** One settlement's progress read now, outside the poller (the last look before a decision). */
  async readNow(id: string): Promise<SettlementProgress | undefined> {
    return (await this.options.readProgress([id]))[0];
  }

  private release(id: string, watched: Watched): void {
    this.waiting--;
    if (watched.listeners.size === 0 && this.watched.get(id) === watched) this.watched.delete(id);
  }

  private startPolling(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), this.options.pollIntervalMs ?? 20);
    this.timer.unref();
  }

  private polling = false;

  private async poll(): Promise<void> {
    if (this.watched.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    if (this.polling) return; // a slow database: skip a tick rather than pile up queries
    this.polling = true;
    try {
      for (const progress of await this.options.readProgress([...this.watched.keys()])) {
        const entry = this.watched.get(progress.settlement.id);
        if (!entry) continue;
        entry.latest = progress;
        for (const listener of [...entry.listeners]) if (listener.until(progress)) listener.done(progress);
      }
    } catch {
      // the database is away: waiters keep their last reading and time out; the next tick tries again
    } finally {
      this.polling = false;
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
