import type { Settlement } from '@facilitator/db';
import { isFinal } from '@facilitator/settlement';

export interface SettlementWaiterOptions {
  /** reads the current rows of these settlements (one query for all of them) */
  findByIds(ids: string[]): Promise<Settlement[]>;
  /** how long one settle request waits for its outcome (SETTLE_WAIT_TIMEOUT_MS) */
  timeoutMs: number;
  /** waits at once in this process; beyond it a request answers pending at once (SETTLE_MAX_WAITERS) */
  maxWaiters: number;
  /**
   * how often the one poller of this process reads every waited-for settlement (one statement for all of
   * them, and only while some request waits); default 20 ms: on the atomic path a paid request waits for
   * one block, and the poll's delay is part of every paid request's latency
   */
  pollIntervalMs?: number;
}

interface Watched {
  latest: Settlement;
  listeners: Set<(s: Settlement) => void>;
}

/**
 * Settle requests that wait for an outcome (Form A and /x402) share one poller per process: every tick
 * reads all settlements being waited for in one query, however many clients wait and on however many
 * settlements; clients waiting on the same settlement share its entry. So Postgres sees at most one query
 * per tick per process, and waiting clients cannot starve the pool. Beyond `maxWaiters` clients, a
 * request does not wait at all: it answers pending (202, or x402's settlement_pending) and may poll.
 */
export class SettlementWaiter {
  private readonly watched = new Map<string, Watched>();
  private waiting = 0;
  private timer?: NodeJS.Timeout;

  constructor(private readonly options: SettlementWaiterOptions) {}

  /** Clients waiting right now in this process. */
  get waiters(): number {
    return this.waiting;
  }

  /** The settlement once final, or the latest row read when the wait ends (timeout, or no room to wait). */
  async waitForFinal(initial: Settlement): Promise<Settlement> {
    if (isFinal(initial.state) || this.waiting >= this.options.maxWaiters || this.options.timeoutMs === 0) return initial;
    this.waiting++;
    let entry = this.watched.get(initial.id);
    if (!entry) {
      entry = { latest: initial, listeners: new Set() };
      this.watched.set(initial.id, entry);
    }
    const watched = entry;
    this.startPolling();
    try {
      return await new Promise<Settlement>((resolve) => {
        const done = (s: Settlement) => {
          clearTimeout(timeout);
          watched.listeners.delete(done);
          resolve(s);
        };
        const timeout = setTimeout(() => done(watched.latest), this.options.timeoutMs);
        watched.listeners.add(done);
      });
    } finally {
      this.waiting--;
      if (watched.listeners.size === 0 && this.watched.get(initial.id) === watched) this.watched.delete(initial.id);
    }
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
      for (const row of await this.options.findByIds([...this.watched.keys()])) {
        const entry = this.watched.get(row.id);
        if (!entry) continue;
        entry.latest = row;
        if (isFinal(row.state)) for (const listener of [...entry.listeners]) listener(row);
      }
    } catch {
      // the database is away: waiters keep their last row and time out into "pending"; the next tick tries again
    } finally {
      this.polling = false;
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
