import type { Settlement } from '@facilitator/db';
import { isFinalOrSent, SettlementWaiter, type SettlementProgress } from './settlement-waiter';
import { setTimeout as sleep } from 'node:timers/promises';

const row = (id: string, state: Settlement['state'], merchant = `0xmerchant_of_${id}`) => ({ id, state, merchant }) as Settlement;
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
    const waiter = new SettlementWaiter({ readProgress: db.readProgress, timeoutMs: 200, maxWaiters: 2, maxWaitersPerMerchant: 2, pollIntervalMs: 20 });
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

/** Postgres's wake-ups as the waiter sees them (SettlementProgressListener; its int test holds the real one to this). */
function wakeups(live = true) {
  const wakeHandlers: Array<(w: { settlementIds: string[]; batchSigned: boolean }) => void> = [];
  const liveHandlers: Array<(live: boolean) => void> = [];
  const source = {
    live,
    onWake: (h: (w: { settlementIds: string[]; batchSigned: boolean }) => void) => void wakeHandlers.push(h),
    onLive: (h: (live: boolean) => void) => void liveHandlers.push(h),
    wake: (settlementIds: string[], batchSigned = false) => wakeHandlers.forEach((h) => h({ settlementIds, batchSigned })),
    setLive: (value: boolean) => {
      source.live = value;
      liveHandlers.forEach((h) => h(value));
    },
  };
  return source;
}

describe("one merchant's share of the room to wait", () => {
  it("answers one merchant's requests at once beyond its share, while another merchant's still wait", async () => {
    const db = table();
    const waiter = new SettlementWaiter({ readProgress: db.readProgress, timeoutMs: 300, maxWaiters: 10, pollIntervalMs: 20 });
    for (let i = 0; i < 8; i++) db.states.set(`stl_busy_${i}`, 'collect_fee');
    db.states.set('stl_other', 'collect_fee');
    const started = Date.now();
    const busy = Array.from({ length: 8 }, (_, i) => waiter.waitForFinal(row(`stl_busy_${i}`, 'pending', '0xbusy')).then(() => Date.now() - started));
    const other = waiter.waitForFinal(row('stl_other', 'pending', '0xother')).then(() => Date.now() - started);
    const waited = await Promise.all(busy);
    // half of maxWaiters (5) wait for their timeout; the busy merchant's other 3 are answered at once
    expect(waited.filter((ms) => ms >= 250)).toHaveLength(5);
    expect(waited.filter((ms) => ms < 100)).toHaveLength(3);
    // the other merchant still had room to wait
    expect(await other).toBeGreaterThanOrEqual(250);
    waiter.close();
  });
});

describe('SettlementWaiter woken by Postgres', () => {
  it('reads nothing while nothing changes, and reads only what a wake-up names', async () => {
    const db = table();
    const source = wakeups();
    const waiter = new SettlementWaiter({ readProgress: db.readProgress, wakeups: source, timeoutMs: 5_000, maxWaiters: 10_000, pollIntervalMs: 20 });
    for (let i = 0; i < 100; i++) db.states.set(`stl_${i}`, 'collect_fee');
    const waits = Array.from({ length: 100 }, (_, i) => waiter.waitForFinal(row(`stl_${i}`, 'pending')));
    await sleep(300);
    // one round for the 100 newly watched (their rows may predate a notification nobody heard), then nothing
    expect(db.queries).toHaveLength(1);
    expect(db.queries[0]).toHaveLength(100);
    for (let i = 0; i < 10; i++) db.states.set(`stl_${i}`, 'settled');
    source.wake(['stl_0', 'stl_1', 'stl_2', 'stl_3', 'stl_4', 'stl_5', 'stl_6', 'stl_7', 'stl_8', 'stl_9', 'stl_not_watched']);
    const answered = await Promise.all(waits.slice(0, 10));
    expect(answered.every((p) => p.settlement.state === 'settled')).toBe(true);
    // one round for the ten woken, none for a settlement nobody waits for
    expect(db.queries).toHaveLength(2);
    expect(db.queries[1].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `stl_${i}`).sort());
    expect(waiter.waiters).toBe(90);
    for (let i = 10; i < 100; i++) db.states.set(`stl_${i}`, 'failed');
    source.wake(Array.from({ length: 90 }, (_, i) => `stl_${i + 10}`));
    await Promise.all(waits);
    expect(db.queries).toHaveLength(3);
    waiter.close();
  });

  it('a batch signed wakes only the waiters still without a transaction', async () => {
    const db = table();
    const source = wakeups();
    const waiter = new SettlementWaiter({ readProgress: db.readProgress, wakeups: source, timeoutMs: 5_000, maxWaiters: 100 });
    db.states.set('stl_sent', 'collect_fee');
    db.states.set('stl_unsent', 'collect_fee');
    db.hashes.set('stl_sent', '0xaaa');
    const sent = waiter.waitForFinal(row('stl_sent', 'collect_fee'));
    const unsent = waiter.waitUntil(progress('stl_unsent', 'collect_fee'), isFinalOrSent, 5_000);
    await sleep(50);
    db.hashes.set('stl_unsent', '0xbbb');
    source.wake([], true);
    expect((await unsent).transactionHash).toBe('0xbbb');
    // the second round read the one without a transaction only
    expect(db.queries[db.queries.length - 1]).toEqual(['stl_unsent']);
    db.states.set('stl_sent', 'settled');
    source.wake(['stl_sent']);
    expect((await sent).settlement.state).toBe('settled');
    waiter.close();
  });

  it('polls while the wake-ups are away, and reads everything once when they come back', async () => {
    const db = table();
    const source = wakeups();
    const waiter = new SettlementWaiter({ readProgress: db.readProgress, wakeups: source, timeoutMs: 5_000, maxWaiters: 100, pollIntervalMs: 20, safetyPollIntervalMs: 60_000 });
    db.states.set('stl_a', 'collect_fee');
    db.states.set('stl_b', 'collect_fee');
    const a = waiter.waitForFinal(row('stl_a', 'pending'));
    const b = waiter.waitForFinal(row('stl_b', 'pending'));
    await sleep(100);
    const quiet = db.queries.length;
    source.setLive(false);
    db.states.set('stl_a', 'settled'); // a change nobody is told of
    expect((await a).settlement.state).toBe('settled');
    expect(db.queries.length).toBeGreaterThan(quiet);
    source.setLive(true);
    await sleep(100);
    const afterReconnect = db.queries.length;
    await sleep(200);
    // back to quiet: the poller slowed down to the safety pace
    expect(db.queries.length).toBe(afterReconnect);
    db.states.set('stl_b', 'settled');
    source.wake(['stl_b']);
    expect((await b).settlement.state).toBe('settled');
    waiter.close();
  });
});

