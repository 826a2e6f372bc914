/**
 * One value, computed at most once per `maxAgeMs` however many ask. Concurrent callers share the one
 * computation in flight. A value past `maxAgeMs` but younger than twice that is served at once while its
 * successor is computed (under steady traffic no visitor ever waits on the computation); an older one (after
 * a quiet spell) is not served: callers wait for the fresh one. A failed computation leaves the last value in
 * place (served while younger than twice maxAgeMs); with none to serve, its error goes to the waiting callers.
 */
export class SingleFlightCache<T> {
  private value: { value: T; at: number } | undefined;
  private inFlight: Promise<T> | undefined;

  constructor(
    private readonly compute: () => Promise<T>,
    readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(): Promise<T> {
    const current = this.value;
    const age = current ? this.now() - current.at : Infinity;
    if (current && age < this.maxAgeMs) return current.value;
    const next = this.refresh();
    if (current && age < 2 * this.maxAgeMs) {
      next.catch(() => undefined); // kept stale: the next caller tries again
      return current.value;
    }
    return next;
  }

  private refresh(): Promise<T> {
    this.inFlight ??= this.compute()
      .then((value) => {
        this.value = { value, at: this.now() };
        return value;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }
}
