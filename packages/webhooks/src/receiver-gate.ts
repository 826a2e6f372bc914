/**
 * Who a delivery goes to, for the per-receiver limits: the URL's origin host and port (the host lowercased,
 * the port explicit or the scheme's). Two paths on one server are one receiver; http and https on their
 * default ports are two (they are two listeners).
 */
export function receiverOf(url: URL): string {
  const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  // `Shop.example.` and `shop.example` are one host: case and the root label's dot do not make another receiver
  return `${url.hostname.toLowerCase().replace(/\.$/, '')}:${port}`;
}

interface ReceiverGateOptions {
  /** deliveries in flight to one receiver at a time, in this process (WEBHOOK_RECEIVER_CONCURRENCY) */
  maxPerReceiver: number;
  /** consecutive failed attempts that open a receiver's breaker (WEBHOOK_BREAKER_FAILURES) */
  breakerFailures: number;
  /** how long an opened breaker holds deliveries before one probe goes through (WEBHOOK_BREAKER_COOLDOWN_MS); doubles per failed probe */
  breakerCooldownMs: number;
  /** the longest an open breaker's cool-down grows to */
  maxCooldownMs: number;
  /** how long a probe may take (the delivery deadline): others wait that long behind it */
  probeMs: number;
  now?: () => number;
  random?: () => number;
}

/** What the delivery reports when it releases its place: success and failure move the breaker; neutral does not. */
type ReceiverOutcome = 'success' | 'failure' | 'neutral';

export type Admission =
  | { admitted: true; release(outcome: ReceiverOutcome): void }
  | { admitted: false; reason: 'receiver_busy' | 'circuit_open'; retryAfterMs: number };

interface ReceiverState {
  active: number;
  consecutiveFailures: number;
  /** 0: closed; otherwise the breaker is open until then, and half-open after */
  openUntil: number;
  cooldownMs: number;
  probing: boolean;
  /** deliveries waiting in line for a place, first come first served (see `admit`) */
  waiting: Waiter[];
  /** when each delivery in flight was admitted */
  startedAt: number[];
  /** how long its deliveries took lately (exponential average, ms); undefined before the first one ends */
  recentMs?: number;
}

interface Waiter {
  overdue: boolean;
  timer: ReturnType<typeof setTimeout>;
  resolve(admission: Admission): void;
}

/** Receivers remembered at most (strangers choose the URLs); clean ones are forgotten at once. */
const MAX_RECEIVERS = 10_000;

/**
 * Per-receiver admission for webhook deliveries, in one worker process: a cap on deliveries in flight to
 * one receiver, and a circuit breaker that stops sending to a receiver that keeps failing.
 *
 * Closed: deliveries go through up to the cap. After `breakerFailures` failed attempts in a row the breaker
 * opens: deliveries are held (not sent, no attempt counted) for the cool-down. Then it is half-open: one
 * delivery goes through as a probe while the others keep waiting; its success closes the breaker, its
 * failure opens it again for twice the cool-down (up to `maxCooldownMs`). A delivery that has waited
 * too long (`overdue`) may go through an open breaker, still within the cap: a receiver that stays down
 * cannot keep an event from ever using its attempts.
 */
export class ReceiverGate {
  private readonly receivers = new Map<string, ReceiverState>();
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(private readonly options: ReceiverGateOptions) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  enter(receiver: string, { overdue = false }: { overdue?: boolean } = {}): Admission {
    const state = this.stateOf(receiver);
    const now = this.now();
    let probe = false;
    if (state.openUntil > 0 && !overdue) {
      if (now < state.openUntil) return this.held(state.openUntil - now);
      if (state.probing) return this.held(this.options.probeMs);
      probe = true;
    }
    // the caller backs off per delivery (a slot frees as soon as one delivery ends)
    if (state.active >= this.options.maxPerReceiver) return { admitted: false, reason: 'receiver_busy', retryAfterMs: 0 };
    state.active += 1;
    if (probe) state.probing = true;
    const startedAt = now;
    state.startedAt.push(startedAt);
    let released = false;
    return {
      admitted: true,
      release: (outcome) => {
        if (released) return;
        released = true;
        state.active -= 1;
        if (probe) state.probing = false;
        state.startedAt.splice(state.startedAt.indexOf(startedAt), 1);
        const tookMs = this.now() - startedAt;
        state.recentMs = state.recentMs === undefined ? tookMs : 0.8 * state.recentMs + 0.2 * tookMs;
        this.settle(receiver, state, outcome);
        this.wakeWaiting(receiver, state);
      },
    };
  }

  /**
   * As `enter`, but a delivery that finds its receiver at the cap waits in line up to `waitMs` for a place
   * to free up, instead of stepping aside at once. A receiver that answers in milliseconds frees a place
   * every few milliseconds: a merchant's burst then flows at the receiver's pace, where stepping aside
   * (a delayed job, back after 250 ms and more) let one receiver take a few dozen deliveries a second
   * while the worker sat idle.
   *
   * A waiting delivery holds a worker slot, so a delivery joins the line only if it can expect a place
   * within `waitMs` at the pace the receiver frees them: places free at `cap / duration`, where duration is
   * how long its deliveries took lately or, if longer, how long the oldest one in flight has been running.
   * A receiver answering in 2 ms may have a line of every slot (each waits a few ms); one answering in
   * 90 ms a line of about its cap; one that answers slowly or hangs none at all, and its deliveries step
   * aside at once as before (a review found that a line of any length let a stranger's receiver answering
   * in 4.9 s keep every slot cycling through waits). Before its first delivery ends, the line is the cap.
   */
  admit(receiver: string, { overdue = false, waitMs = 0 }: { overdue?: boolean; waitMs?: number } = {}): Promise<Admission> {
    const admission = this.enter(receiver, { overdue });
    if (admission.admitted || admission.reason !== 'receiver_busy' || waitMs <= 0) return Promise.resolve(admission);
    const state = this.stateOf(receiver);
    if (state.waiting.length >= this.lineLength(state, waitMs)) return Promise.resolve(admission);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        overdue,
        resolve,
        timer: setTimeout(() => {
          const place = state.waiting.indexOf(waiter);
          if (place >= 0) state.waiting.splice(place, 1);
          resolve({ admitted: false, reason: 'receiver_busy', retryAfterMs: 0 });
        }, waitMs),
      };
      state.waiting.push(waiter);
    });
  }

  /** How many deliveries may wait for this receiver: those that can expect a place within `waitMs`. */
  private lineLength(state: ReceiverState, waitMs: number): number {
    const cap = this.options.maxPerReceiver;
    // admissions are appended in time order and removed in place: the first is the oldest in flight
    const oldest = state.startedAt.length > 0 ? this.now() - state.startedAt[0] : 0;
    const line = Math.floor((waitMs * cap) / Math.max(state.recentMs ?? 0, oldest, 1));
    // with no delivery ended yet (a receiver forgotten while idle, or new), the pace is not known: the cap
    return state.recentMs === undefined ? Math.min(cap, line) : line;
  }

  /** For metrics and tests: deliveries in flight to a receiver and its breaker. */
  snapshot(receiver: string): { active: number; consecutiveFailures: number; breaker: 'closed' | 'open' | 'half-open' } {
    const state = this.receivers.get(receiver);
    if (!state) return { active: 0, consecutiveFailures: 0, breaker: 'closed' };
    const breaker = state.openUntil === 0 ? 'closed' : this.now() < state.openUntil ? 'open' : 'half-open';
    return { active: state.active, consecutiveFailures: state.consecutiveFailures, breaker };
  }

  private settle(receiver: string, state: ReceiverState, outcome: ReceiverOutcome): void {
    if (outcome === 'success') {
      state.consecutiveFailures = 0;
      state.openUntil = 0;
      state.cooldownMs = this.options.breakerCooldownMs;
    } else if (outcome === 'failure') {
      state.consecutiveFailures += 1;
      // a failed probe (or an overdue delivery) reopens at once; a closed breaker opens at the threshold
      if (state.openUntil > 0 || state.consecutiveFailures >= this.options.breakerFailures) {
        state.openUntil = this.now() + state.cooldownMs;
        state.cooldownMs = Math.min(state.cooldownMs * 2, this.options.maxCooldownMs);
      }
    }
    if (state.active === 0 && state.consecutiveFailures === 0 && state.openUntil === 0 && state.waiting.length === 0) this.receivers.delete(receiver);
  }

  /**
   * A place freed: the first in line takes it (synchronously, so no newcomer overtakes the line). If the
   * breaker opened meanwhile, every waiting delivery it holds is told so and steps aside, as a newcomer
   * would be, even behind an overdue one that is still waiting for a place.
   */
  private wakeWaiting(receiver: string, state: ReceiverState): void {
    for (let i = 0; i < state.waiting.length; ) {
      const admission = this.enter(receiver, { overdue: state.waiting[i].overdue });
      if (!admission.admitted && admission.reason === 'receiver_busy') {
        i += 1;
        continue;
      }
      const [waiter] = state.waiting.splice(i, 1);
      clearTimeout(waiter.timer);
      waiter.resolve(admission);
    }
  }

  /** Held by the breaker: come back after `waitMs`, spread by up to a second so held deliveries do not return together. */
  private held(waitMs: number): Admission {
    return { admitted: false, reason: 'circuit_open', retryAfterMs: Math.max(0, Math.ceil(waitMs)) + Math.floor(this.random() * 1_000) };
  }

  private stateOf(receiver: string): ReceiverState {
    let state = this.receivers.get(receiver);
    if (!state) {
      if (this.receivers.size >= MAX_RECEIVERS) this.evictOneIdle();
      state = { active: 0, consecutiveFailures: 0, openUntil: 0, cooldownMs: this.options.breakerCooldownMs, probing: false, waiting: [], startedAt: [] };
      this.receivers.set(receiver, state);
    }
    return state;
  }

  /** The oldest receiver with nothing in flight (its breaker, if open, is forgotten: the cap still holds). */
  private evictOneIdle(): void {
    for (const [receiver, state] of this.receivers) {
      if (state.active === 0) {
        this.receivers.delete(receiver);
        return;
      }
    }
  }
}
