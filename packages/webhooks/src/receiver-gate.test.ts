import { ReceiverGate, receiverOf, type Admission } from './receiver-gate';

function gate(overrides: Partial<ConstructorParameters<typeof ReceiverGate>[0]> = {}) {
  const clock = { now: 1_000_000 };
  const g = new ReceiverGate({
    maxPerReceiver: 2,
    breakerFailures: 3,
    breakerCooldownMs: 30_000,
    maxCooldownMs: 120_000,
    probeMs: 5_000,
    now: () => clock.now,
    random: () => 0,
    ...overrides,
  });
  return { g, clock };
}

function admitted(a: Admission) {
  if (!a.admitted) throw new Error(`held: ${a.reason}`);
  return a;
}

describe('receiverOf', () => {
  it('is the origin host and port, the port explicit or the scheme default', () => {
    expect(receiverOf(new URL('https://Hooks.Example.com/a'))).toBe('hooks.example.com:443');
    expect(receiverOf(new URL('https://hooks.example.com:443/b?x=1'))).toBe('hooks.example.com:443');
    expect(receiverOf(new URL('https://HOOKS.example.com./c'))).toBe('hooks.example.com:443');
    expect(receiverOf(new URL('http://hooks.example.com/a'))).toBe('hooks.example.com:80');
    expect(receiverOf(new URL('http://127.0.0.1:8080/a'))).toBe('127.0.0.1:8080');
    expect(receiverOf(new URL('http://[::1]:8080/a'))).toBe('[::1]:8080');
  });
});

describe('ReceiverGate', () => {
  it('admits at most the cap per receiver; other receivers are not affected', () => {
    const { g } = gate();
    const a = admitted(g.enter('a:443'));
    admitted(g.enter('a:443'));
    expect(g.enter('a:443')).toMatchObject({ admitted: false, reason: 'receiver_busy' });
    expect(g.enter('b:443').admitted).toBe(true);
    a.release('neutral');
    expect(g.enter('a:443').admitted).toBe(true);
    expect(g.snapshot('a:443').active).toBe(2);
  });

  describe('admit: a short line at a busy receiver', () => {
    afterEach(() => jest.useRealTimers());

    it('gives a freed place to the first in line, before any newcomer, and keeps the cap', async () => {
      const { g } = gate();
      const first = admitted(g.enter('a:443'));
      admitted(g.enter('a:443'));
      const order: string[] = [];
      const w1 = g.admit('a:443', { waitMs: 60_000 }).then((a) => (order.push('w1'), a));
      const w2 = g.admit('a:443', { waitMs: 60_000 }).then((a) => (order.push('w2'), a));
      first.release('success');
      // the place went to w1 at the release: a newcomer finds the receiver still at its cap
      expect(g.enter('a:443')).toMatchObject({ admitted: false, reason: 'receiver_busy' });
      const a1 = admitted(await w1);
      expect(g.snapshot('a:443').active).toBe(2);
      a1.release('success');
      admitted(await w2);
      expect(order).toEqual(['w1', 'w2']);
      expect(g.snapshot('a:443').active).toBe(2);
    });

    it('steps aside as busy when no place frees within the wait, and leaves the line', async () => {
      jest.useFakeTimers();
      const { g } = gate();
      const first = admitted(g.enter('a:443'));
      admitted(g.enter('a:443'));
      const waiting = g.admit('a:443', { waitMs: 100 });
      jest.advanceTimersByTime(100);
      await expect(waiting).resolves.toEqual({ admitted: false, reason: 'receiver_busy', retryAfterMs: 0 });
      // it no longer holds a place in line: the freed place stays free for the next comer
      first.release('success');
      expect(g.snapshot('a:443').active).toBe(1);
      admitted(g.enter('a:443'));
    });

    it('tells the line the breaker opened instead of sending into it', async () => {
      const { g } = gate({ maxPerReceiver: 1, breakerFailures: 1 });
      const first = admitted(g.enter('a:443'));
      const waiting = g.admit('a:443', { waitMs: 60_000 });
      first.release('failure');
      await expect(waiting).resolves.toEqual({ admitted: false, reason: 'circuit_open', retryAfterMs: 30_000 });
      expect(g.snapshot('a:443')).toMatchObject({ active: 0, breaker: 'open' });
    });

    it('lets a delivery wait only if it can expect a place within the wait, at the pace the receiver frees them', async () => {
      jest.useFakeTimers();
      const { g, clock } = gate();
      const lineOf = async (count: number) => {
        let joined = 0;
        const answers = Array.from({ length: count }, () => {
          let answered = false;
          const p = g.admit('a:443', { waitMs: 100 }).then((a) => ((answered = true), a));
          return { p, answered: () => answered };
        });
        await Promise.resolve();
        joined = answers.filter((a) => !a.answered()).length;
        jest.advanceTimersByTime(100);
        await Promise.all(answers.map((a) => a.p));
        return joined;
      };
      // deliveries overlapping in pairs, one ending every `ms` (so each takes 2 × ms): the receiver never goes
      // idle (an idle receiver is forgotten, its pace too)
      let current = admitted(g.enter('a:443'));
      const deliverOne = (ms: number) => {
        const next = admitted(g.enter('a:443'));
        clock.now += ms;
        current.release('success');
        current = next;
      };

      const second = admitted(g.enter('a:443'));
      // before any delivery ended: a line of the cap (2)
      expect(await lineOf(5)).toBe(2);
      second.release('success');
      // deliveries that take 8 ms: with the cap of 2, a place frees every 4 ms, so 25 can expect one within 100 ms
      for (let i = 0; i < 30; i++) deliverOne(4);
      let busy = admitted(g.enter('a:443'));
      expect(await lineOf(60)).toBe(25);
      busy.release('success');
      // the one in flight has been running for 64 ms: the receiver slowed down, fewer may wait
      clock.now += 60;
      busy = admitted(g.enter('a:443'));
      expect(await lineOf(10)).toBe(3);
      busy.release('success');
      // deliveries that take seconds (an HTTP answer after 4.9 s never opens the breaker): no line at all
      for (let i = 0; i < 5; i++) deliverOne(4_900);
      busy = admitted(g.enter('a:443'));
      expect(await lineOf(5)).toBe(0);
      busy.release('success');
      current.release('success');
    });

    it('before a new receiver\'s first delivery ends, shortens the line as its deliveries in flight age', async () => {
      jest.useFakeTimers();
      const { g, clock } = gate({ maxPerReceiver: 4 });
      const inFlight = [0, 1, 2, 3].map(() => admitted(g.enter('a:443')));
      clock.now += 200; // 100 ms × 4 places ÷ 200 ms: two can expect a place within the wait
      const answers = [0, 1, 2].map(() => g.admit('a:443', { waitMs: 100 }));
      await expect(answers[2]).resolves.toMatchObject({ admitted: false, reason: 'receiver_busy' });
      jest.advanceTimersByTime(100);
      await Promise.all(answers);
      clock.now += 300; // 500 ms in flight: none may wait
      await expect(g.admit('a:443', { waitMs: 100 })).resolves.toMatchObject({ admitted: false, reason: 'receiver_busy' });
      inFlight.forEach((d) => d.release('success'));
    });

    it('sends away the whole line when the breaker opens, also behind overdue deliveries still waiting for a place', async () => {
      const { g } = gate({ maxPerReceiver: 3, breakerFailures: 1 });
      const failing = admitted(g.enter('a:443'));
      const others = [admitted(g.enter('a:443')), admitted(g.enter('a:443'))];
      const overdue = [g.admit('a:443', { overdue: true, waitMs: 60_000 }), g.admit('a:443', { overdue: true, waitMs: 60_000 })];
      const held = g.admit('a:443', { waitMs: 60_000 });
      // the failure opens the breaker; its place goes to the first overdue delivery (it may pass an open
      // breaker), the second keeps waiting for a place, and the one behind it is told the breaker is open
      failing.release('failure');
      const first = admitted(await overdue[0]);
      await expect(held).resolves.toEqual({ admitted: false, reason: 'circuit_open', retryAfterMs: 30_000 });
      first.release('neutral');
      admitted(await overdue[1]).release('neutral');
      for (const o of others) o.release('neutral');
    });

    it('does not wait when the receiver has a place, or when told not to', async () => {
      const { g } = gate({ maxPerReceiver: 1 });
      const first = admitted(await g.admit('a:443', { waitMs: 60_000 }));
      await expect(g.admit('a:443')).resolves.toMatchObject({ admitted: false, reason: 'receiver_busy' });
      first.release('success');
    });
  });

  it('opens after the threshold of consecutive failures, holds for the cool-down, then lets one probe through', () => {
    const { g, clock } = gate();
    for (let i = 0; i < 3; i++) admitted(g.enter('a:443')).release('failure');
    expect(g.snapshot('a:443').breaker).toBe('open');
    const held = g.enter('a:443');
    expect(held).toEqual({ admitted: false, reason: 'circuit_open', retryAfterMs: 30_000 });
    clock.now += 30_000;
    expect(g.snapshot('a:443').breaker).toBe('half-open');
    const probe = admitted(g.enter('a:443'));
    // one probe at a time: the others wait about as long as a delivery may take
    expect(g.enter('a:443')).toEqual({ admitted: false, reason: 'circuit_open', retryAfterMs: 5_000 });
    probe.release('failure');
    // a failed probe reopens for twice the cool-down
    expect(g.enter('a:443')).toEqual({ admitted: false, reason: 'circuit_open', retryAfterMs: 60_000 });
    clock.now += 60_000;
    admitted(g.enter('a:443')).release('success');
    expect(g.snapshot('a:443')).toEqual({ active: 0, consecutiveFailures: 0, breaker: 'closed' });
    expect(g.enter('a:443').admitted).toBe(true);
  });

  it('a success resets the count: failures must be consecutive', () => {
    const { g } = gate();
    admitted(g.enter('a:443')).release('failure');
    admitted(g.enter('a:443')).release('failure');
    admitted(g.enter('a:443')).release('success');
    admitted(g.enter('a:443')).release('failure');
    admitted(g.enter('a:443')).release('failure');
    expect(g.snapshot('a:443').breaker).toBe('closed');
  });

  it('neutral releases (a delivery that never reached the receiver) do not move the breaker', () => {
    const { g } = gate();
    for (let i = 0; i < 10; i++) admitted(g.enter('a:443')).release('neutral');
    expect(g.snapshot('a:443')).toEqual({ active: 0, consecutiveFailures: 0, breaker: 'closed' });
  });

  it('the cool-down grows to its maximum and no further', () => {
    const { g, clock } = gate();
    for (let i = 0; i < 3; i++) admitted(g.enter('a:443')).release('failure');
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const held = g.enter('a:443');
      if (held.admitted) throw new Error('expected held');
      waits.push(held.retryAfterMs);
      clock.now += held.retryAfterMs;
      admitted(g.enter('a:443')).release('failure');
    }
    expect(waits).toEqual([30_000, 60_000, 120_000, 120_000]);
  });

  it('an overdue delivery goes through an open breaker, but never past the cap', () => {
    const { g } = gate();
    for (let i = 0; i < 3; i++) admitted(g.enter('a:443')).release('failure');
    expect(g.enter('a:443').admitted).toBe(false);
    admitted(g.enter('a:443', { overdue: true }));
    admitted(g.enter('a:443', { overdue: true }));
    expect(g.enter('a:443', { overdue: true })).toMatchObject({ admitted: false, reason: 'receiver_busy' });
  });

  it('spreads deliveries held by the breaker by up to a second; a busy receiver leaves the back-off to the caller', () => {
    const { g } = gate({ random: () => 0.999, maxPerReceiver: 1 });
    admitted(g.enter('a:443'));
    expect(g.enter('a:443')).toEqual({ admitted: false, reason: 'receiver_busy', retryAfterMs: 0 });
    const { g: open } = gate({ random: () => 0.999 });
    for (let i = 0; i < 3; i++) admitted(open.enter('b:443')).release('failure');
    expect(open.enter('b:443')).toEqual({ admitted: false, reason: 'circuit_open', retryAfterMs: 30_999 });
  });

  it('releasing twice counts once', () => {
    const { g } = gate();
    const a = admitted(g.enter('a:443'));
    a.release('failure');
    a.release('failure');
    expect(g.snapshot('a:443')).toMatchObject({ active: 0, consecutiveFailures: 1 });
  });
});
