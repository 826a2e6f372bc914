import { SingleFlightCache } from './single-flight-cache';

/** A computation the test finishes by hand, counting how often it was started. */
function controlled() {
  const pending: Array<{ resolve(v: number): void; reject(e: Error): void }> = [];
  let started = 0;
  const compute = () =>
    new Promise<number>((resolve, reject) => {
      started += 1;
      pending.push({ resolve, reject });
    });
  return { compute, started: () => started, finish: (v: number) => pending.shift()!.resolve(v), fail: (e: Error) => pending.shift()!.reject(e) };
}

describe('SingleFlightCache', () => {
  it('shares one computation between concurrent callers, and serves it until it is maxAgeMs old', async () => {
    let now = 1_000;
    const c = controlled();
    const cache = new SingleFlightCache(c.compute, 5_000, () => now);
    const callers = Array.from({ length: 50 }, () => cache.get());
    expect(c.started()).toBe(1);
    c.finish(7);
    expect(await Promise.all(callers)).toEqual(Array(50).fill(7));
    now += 4_999;
    expect(await cache.get()).toBe(7);
    expect(c.started()).toBe(1);
  });

  it('serves the expired value while one successor is computed, then the successor', async () => {
    let now = 0;
    const c = controlled();
    const cache = new SingleFlightCache(c.compute, 1_000, () => now);
    const first = cache.get();
    c.finish(1);
    await first;
    now = 1_000;
    // expired, but younger than twice maxAgeMs: every caller gets the old value at once; one computation starts
    expect(await Promise.all([cache.get(), cache.get(), cache.get()])).toEqual([1, 1, 1]);
    expect(c.started()).toBe(2);
    c.finish(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cache.get()).toBe(2);
    expect(c.started()).toBe(2);
  });

  it('after a quiet spell (twice maxAgeMs), makes callers wait for a fresh value instead of serving an old one', async () => {
    let now = 0;
    const c = controlled();
    const cache = new SingleFlightCache(c.compute, 1_000, () => now);
    const first = cache.get();
    c.finish(1);
    await first;
    now = 2_000;
    const callers = [cache.get(), cache.get()];
    expect(c.started()).toBe(2);
    c.finish(2);
    expect(await Promise.all(callers)).toEqual([2, 2]);
  });

  it('keeps the last good value when a computation fails, and tries again on the next call', async () => {
    let now = 0;
    const c = controlled();
    const cache = new SingleFlightCache(c.compute, 1_000, () => now);
    const first = cache.get();
    c.finish(1);
    await first;
    now = 1_500;
    expect(await cache.get()).toBe(1);
    c.fail(new Error('database down'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cache.get()).toBe(1);
    expect(c.started()).toBe(3);
  });

  it('with no value yet, gives the failure to every caller that waited for it, and does not keep it', async () => {
    const c = controlled();
    const cache = new SingleFlightCache(c.compute, 1_000);
    const callers = [cache.get(), cache.get()];
    c.fail(new Error('database down'));
    for (const caller of callers) await expect(caller).rejects.toThrow('database down');
    const next = cache.get();
    expect(c.started()).toBe(2);
    c.finish(3);
    expect(await next).toBe(3);
  });
});
