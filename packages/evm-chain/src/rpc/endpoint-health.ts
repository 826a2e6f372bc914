export interface HealthPolicy {
  /** first wait before an endpoint marked down is tried again; doubles per failed retry */
  retryAfterMs: number;
  /** the longest wait between retries of a down endpoint */
  maxRetryAfterMs: number;
}

const LATENCY_WEIGHT = 0.2;

/**
 * Health of one endpoint. One failed call marks it down at once: the hot path must stop waiting on a
 * dead node after its first failure, not after a run of them. A down endpoint is retried (by a probe,
 * off the callers' path) after a back-off that doubles while it stays down.
 */
export class EndpointHealth {
  up = true;
  answered = 0;
  failed = 0;
  latencyMs = 0;
  private downStreak = 0;
  private retryAt = 0;
  private probing = false;

  constructor(private readonly policy: HealthPolicy) {}

  succeeded(latencyMs: number): void {
    this.answered++;
    this.latencyMs = this.answered === 1 ? latencyMs : this.latencyMs + LATENCY_WEIGHT * (latencyMs - this.latencyMs);
    this.up = true;
    this.downStreak = 0;
  }

  broke(now = Date.now()): void {
    this.failed++;
    // calls that were in flight when it went down (a batch, a /readyz check) fail too: only a failure once
    // the wait has passed (a retry) lengthens it
    if (!this.up && now < this.retryAt) return;
    this.up = false;
    const wait = Math.min(this.policy.retryAfterMs * 2 ** this.downStreak, this.policy.maxRetryAfterMs);
    this.downStreak++;
    this.retryAt = now + wait;
  }

  /** A down endpoint whose back-off has passed and that nobody is probing yet: claims the probe. */
  claimProbe(now = Date.now()): boolean {
    if (this.up || this.probing || now < this.retryAt) return false;
    this.probing = true;
    return true;
  }

  probeDone(): void {
    this.probing = false;
  }

  /** when a down endpoint may be tried again (0 when up) */
  get nextTryAt(): number {
    return this.up ? 0 : this.retryAt;
  }
}
