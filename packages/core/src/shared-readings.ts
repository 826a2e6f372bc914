/**
 * Readings from the node that many callers may share while they are fresh enough (one per chain, say):
 * callers within `maxAgeMs` of a reading get the same promise, so concurrent callers make one call. A
 * reading that fails is dropped at once, so the next caller asks again.
 */
export class SharedReadings<K, V> {
  private readonly readings = new Map<K, { at: number; value: Promise<V> }>();

  get(key: K, maxAgeMs: number, read: () => Promise<V>): Promise<V> {
    const cached = this.readings.get(key);
    if (cached && Date.now() - cached.at < maxAgeMs) return cached.value;
    const value = read();
    this.readings.set(key, { at: Date.now(), value });
    value.catch(() => {
      if (this.readings.get(key)?.value === value) this.readings.delete(key);
    });
    return value;
  }
}
