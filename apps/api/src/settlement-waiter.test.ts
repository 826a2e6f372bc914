import type { Settlement } from '@facilitator/db';
import { isFinalOrSent, SettlementWaiter, type SettlementProgress } from './settlement-waiter';
import { setTimeout as sleep } from 'node:timers/promises';

const row = (id: string, state: Settlement['state']) => ({ id, state }) as Settlement;
const progress = (id: string, state: Settlement['state'], transactionHash: string | null = null): SettlementProgress => ({ settlement: row(id, state), transactionHash });

/** A settlements table in memory, with the hash of each one's transaction, that counts the queries made of it. */
function table() {
  const states = new Map<string, Settlement['state']>();
  const hashes = new Map<string, string>();
  const queries: string[][] = [];
  return {
    states,
    hashes,
    queries,
    readProgress: async (ids: string[]) => {
      queries.push(ids);
      return ids.filter((id) => states.has(id)).map((id) => progress(id, states.get(id)!, hashes.get(id) ?? null));
    },
  };
}

describe('SettlementWaiter', () => {
  it('serves any number of waiting clients with one query per tick, and answers each when its settlement is final', async () => {
    const db = table();
    const waiter = new SettlementWaiter({ readProgress: db.readProgress, timeoutMs: 5_000, maxWaiters: 10_000, maxWaitersPerSettlement: 10, pollIntervalMs: 20 });
    for (let i = 0; i < 100; i++) db.states.set(`stl_${i}`, 'collect_fee');
    // ten clients on each of 100 settlements
    const waits = Array.from({ length: 1000 }, (_, i) => waiter.waitForFinal(row(`stl_${i % 100}`, 'pending')));
    expect(waiter.waiters).toBe(1000);
    await sleep(100);
    for (let i = 0; i < 100; i++) db.states.set(`stl_${i}`, i % 2 ? 'settled' : 'failed');
    const outcomes = await Promise.all(waits);
    expect(outcomes.filter((p) => p.settlement.state === 'settled')).toHaveLength(500);
    expect(outcomes.filter((p) => p.settlement.state === 'failed')).toHaveLength(500);
    // about one query per tick for all of them (never one per client)
    expect(db.queries.length).toBeLessThan(20);
    expect(db.queries.every((ids) => ids.length <= 100)).toBe(true);
    expect(waiter.waiters).toBe(0);
    waiter.close();
  });

  it('answers at once, without waiting, beyond maxWaiters', async () => {
    const db = table();
    db.states.set('stl_a', 'pending');
    const waiter = new SettlementWaiter({ readProgress: db.readProgress, timeoutMs: 200, maxWaiters: 2, pollIntervalMs: 20 });
    const started = Date.now();
    const answered: string[] = [];
    const ask = (name: string) => waiter.waitForFinal(row('stl_a', 'pending')).then((p) => (answered.push(name), p));
    const [a, b, c] = [ask('a'), ask('b'), ask('c')];
    expect(await c).toEqual(progress('stl_a', 'pending'));
    // "at once" by order: the third is answered while the two within maxWaiters still wait for their timeout
    expect(answered).toEqual(['c']);
    await Promise.all([a, b]);
    expect(answered).toEqual(['c', 'a', 'b']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    waiter.close();
  });

  it('refuses (429) one more request than maxWaitersPerSettlement for the same settlement; other settlements still wait', async () => {
    const db = table();
    db.states.set('stl_s', 'collect_fee');
    db.states.set('stl_t', 'collect_fee');
    const waiter = new SettlementWaiter({ readProgress: db.readProgress, timeoutMs: 5_000, maxWaiters: 100, maxWaitersPerSettlement: 2, pollIntervalMs: 10 });
    const two = [waiter.waitForFinal(row('stl_s', 'collect_fee')), waiter.waitForFinal(row('stl_s', 'collect_fee'))];
    await expect(waiter.waitForFinal(row('stl_s', 'collect_fee'))).rejects.toMatchObject({ code: 'rate_limited', status: 429 });
    const other = waiter.waitForFinal(row('stl_t', 'collect_fee'));
    expect(waiter.waiters).toBe(3);
    db.states.set('stl_s', 'settled');
    db.states.set('stl_t', 'settled');
    expect((await Promise.all([...two, other])).map((p) => p.settlement.state)).toEqual(['settled', 'settled', 'settled']);
    waiter.close();
  });

  it('returns the latest row read when the wait times out, and keeps waiting through a database error', async () => {
    let failing = true;
    const waiter = new SettlementWaiter({
      readProgress: async (ids) => {
        if (failing) throw new Error('database away');
        return ids.map((id) => progress(id, 'executing'));
      },
      timeoutMs: 300,
      maxWaiters: 10,
      pollIntervalMs: 20,
    });
    setTimeout(() => (failing = false), 100);
    expect((await waiter.waitForFinal(row('stl_x', 'pending'))).settlement.state).toBe('executing');
    waiter.close();
  });

  it('does not wait for a settlement that is already final', async () => {
    const waiter = new SettlementWaiter({ readProgress: async () => [], timeoutMs: 10_000, maxWaiters: 10 });
    await expect(waiter.waitForFinal(row('stl_y', 'settled'))).resolves.toEqual(progress('stl_y', 'settled'));
    expect(waiter.waiters).toBe(0);
  });

  it('answers each client by its own condition: one waiting for a hash is answered once the hash is there, one waiting for the outcome keeps waiting', async () => {
    const db = table();
    db.states.set('stl_h', 'collect_fee');
    const waiter = new SettlementWaiter({ readProgress: db.readProgress, timeoutMs: 5_000, maxWaiters: 10, pollIntervalMs: 10 });
    const forHash = waiter.waitUntil(progress('stl_h', 'collect_fee'), isFinalOrSent, 5_000);
    const forFinal = waiter.waitForFinal(row('stl_h', 'collect_fee'));
    let finalAnswered = false;
    void forFinal.then(() => (finalAnswered = true));
    db.hashes.set('stl_h', '0xabc');
    expect(await forHash).toEqual(progress('stl_h', 'collect_fee', '0xabc'));
    expect(finalAnswered).toBe(false);
    db.states.set('stl_h', 'settled');
    expect((await forFinal).settlement.state).toBe('settled');
    expect(waiter.waiters).toBe(0);
    waiter.close();
  });
});
