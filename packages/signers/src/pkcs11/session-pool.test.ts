import { SessionPool } from './session-pool';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('SessionPool', () => {
  it('never lends one session to two operations at once, and runs as many at once as it has sessions', async () => {
    const pool = new SessionPool(['a', 'b']);
    const busy = new Set<string>();
    let most = 0;
    await Promise.all(
      Array.from({ length: 20 }, () =>
        pool.use(async (session) => {
          expect(busy.has(session)).toBe(false);
          busy.add(session);
          most = Math.max(most, busy.size);
          await tick();
          busy.delete(session);
        }),
      ),
    );
    expect(most).toBe(2);
  });

  it('serves waiters in order, and a failed operation gives its session back', async () => {
    const pool = new SessionPool([1]);
    const order: number[] = [];
    const failing = pool.use(async () => {
      await tick();
      throw new Error('C_Sign failed');
    });
    const later = [1, 2, 3].map((n) => pool.use(async () => void order.push(n)));
    await expect(failing).rejects.toThrow('C_Sign failed');
    await Promise.all(later);
    expect(order).toEqual([1, 2, 3]);
  });

  it('keeps a replaced session in place of the broken one', async () => {
    const pool = new SessionPool(['old']);
    await pool.use(async (_session, replace) => replace('new'));
    await pool.use(async (session) => expect(session).toBe('new'));
    expect(await pool.drain()).toEqual(['new']);
  });

  it('drains only once every operation has ended', async () => {
    const pool = new SessionPool(['a', 'b']);
    let release!: () => void;
    const running = pool.use(() => new Promise<void>((resolve) => (release = resolve)));
    let drained = false;
    const draining = pool.drain().then((sessions) => {
      drained = true;
      return sessions;
    });
    await tick();
    expect(drained).toBe(false);
    release();
    await running;
    expect((await draining).sort()).toEqual(['a', 'b']);
  });
});
