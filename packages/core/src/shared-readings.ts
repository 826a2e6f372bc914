interface SharedReadingsOptions {
  /** when a new key would go beyond this many, stale readings are dropped first (all of them if none is stale) */
  maxEntries?: number;
  now?: () => number;
}

/**
 * Readings that many callers may share while they are fresh enough (one per chain, or per merchant):
 * callers within `maxAgeMs` of a reading get the same promise, so concurrent callers make one call. A
 * reading that fails is dropped at once, so the next caller asks again. Keyed by something strangers can
 * multiply (merchants), give it `maxEntries`.
 */
export class SharedReadings<K, V> {
  private readonly readings = new Map<K, { at: number; value: Promise<V> }>();
  private readonly now: () => number;

  constructor(private readonly options: SharedReadingsOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  get(key: K, maxAgeMs: number, read: () => Promise<V>): Promise<V> {
    const at = this.now();
    const cached = this.readings.get(key);
    if (cached && at - cached.at < maxAgeMs) return cached.value;
    if (!cached) this.makeRoom(at, maxAgeMs);
    const value = read();
    this.readings.set(key, { at, value });
    value.catch(() => {
      if (this.readings.get(key)?.value === value) this.readings.delete(key);
    });
    return value;
  }

  /** Drops the reading of `key`: the next caller reads afresh (after a write this process made). */
  forget(key: K): void {
    this.readings.delete(key);
  }

  private makeRoom(at: number, maxAgeMs: number): void {
    const { maxEntries } = this.options;
    if (maxEntries === undefined || this.readings.size < maxEntries) return;
    for (const [key, reading] of this.readings) if (at - reading.at >= maxAgeMs) this.readings.delete(key);
    if (this.readings.size >= maxEntries) this.readings.clear();
  }
}
