/**
 * Waiters for news of a relayer transaction (its id on the relayer). A signed webhook calls `notify`: the
 * waiting `waitForOutcome` asks the relayer at once instead of at its next poll. Only a wake-up: what the
 * notification says is never used, so a forged or replayed one costs a request, nothing more.
 */
export class StatusWakeups {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Resolves after `ms`, or earlier when `relayerTransactionId` is notified; true when notified. */
  wait(relayerTransactionId: string, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const set = this.waiters.get(relayerTransactionId) ?? new Set<() => void>();
      this.waiters.set(relayerTransactionId, set);
      const done = (notified: boolean) => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.waiters.get(relayerTransactionId) === set) this.waiters.delete(relayerTransactionId);
        resolve(notified);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      set.add(wake);
    });
  }

  /** Wakes every waiter of this transaction; returns how many there were. */
  notify(relayerTransactionId: string): number {
    const set = this.waiters.get(relayerTransactionId);
    if (!set) return 0;
    const woken = [...set];
    for (const wake of woken) wake();
    return woken.length;
  }

  /** How many waits are under way (for tests and metrics). */
  get size(): number {
    let total = 0;
    for (const set of this.waiters.values()) total += set.size;
    return total;
  }
}
