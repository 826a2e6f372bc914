import { EndpointHealth } from './endpoint-health';

describe('EndpointHealth', () => {
  const policy = { retryAfterMs: 1_000, maxRetryAfterMs: 30_000 };

  it('marks an endpoint down at its first failure and doubles the wait per failed retry, up to the ceiling', () => {
    const health = new EndpointHealth(policy);
    health.broke(0);
    expect({ up: health.up, nextTryAt: health.nextTryAt }).toEqual({ up: false, nextTryAt: 1_000 });
    health.broke(1_000);
    expect(health.nextTryAt).toBe(3_000);
    health.broke(3_000);
    expect(health.nextTryAt).toBe(7_000);
    const waits: number[] = [];
    for (let at = 7_000, i = 0; i < 6; i++) {
      health.broke(at);
      waits.push(health.nextTryAt - at);
      at = health.nextTryAt;
    }
    expect(waits).toEqual([8_000, 16_000, 30_000, 30_000, 30_000, 30_000]);
  });

  it('does not lengthen the wait for calls that failed together before it ended', () => {
    const health = new EndpointHealth(policy);
    // five calls of one refused batch, then a /readyz check, all within the first wait
    for (const at of [0, 0, 1, 2, 2, 500]) health.broke(at);
    expect(health.nextTryAt).toBe(1_000);
    expect(health.failed).toBe(6);
    health.broke(1_000);
    expect(health.nextTryAt).toBe(3_000);
  });

  it('is up again after one answer, with the wait starting over', () => {
    const health = new EndpointHealth(policy);
    health.broke(0);
    health.broke(1_000);
    health.succeeded(12);
    expect({ up: health.up, nextTryAt: health.nextTryAt }).toEqual({ up: true, nextTryAt: 0 });
    health.broke(5_000);
    expect(health.nextTryAt).toBe(6_000);
  });
});
