/**
 * PKCS#11 sessions lent out one operation at a time: a session holds one active operation (C_SignInit then
 * C_Sign), so two signatures on one session must never interleave. With one session, signatures queue;
 * with more, that many run at once on libuv's threads. Waiters are served in order.
 */
export class SessionPool<Session> {
  private readonly idle: Session[];
  private readonly waiters: Array<(session: Session) => void> = [];
  private readonly all: Session[];

  constructor(sessions: readonly Session[]) {
    this.all = [...sessions];
    this.idle = [...sessions];
  }

  get size(): number {
    return this.all.length;
  }

  /** Runs `operation` on a session of its own; `replace` may swap a broken session for a new one. */
  async use<T>(operation: (session: Session, replace: (fresh: Session) => void) => Promise<T>): Promise<T> {
    let session: Session = await this.take();
    const replace = (fresh: Session) => {
      this.all[this.all.indexOf(session)] = fresh;
      session = fresh;
    };
    try {
      return await operation(session, replace);
    } finally {
      const next = this.waiters.shift();
      if (next) next(session);
      else this.idle.push(session);
    }
  }

  private take(): Promise<Session> {
    if (this.idle.length > 0) return Promise.resolve(this.idle.pop() as Session);
    return new Promise<Session>((resolve) => this.waiters.push(resolve));
  }

  /** Waits until no operation runs, then returns every session (to close them). */
  async drain(): Promise<Session[]> {
    const taken: Session[] = [];
    while (taken.length < this.all.length) {
      taken.push(await this.take());
    }
    return taken;
  }
}
