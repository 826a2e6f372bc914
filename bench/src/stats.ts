// Small, exact statistics over latency samples. We keep every sample (tens of thousands of numbers at
// most) instead of a histogram, so percentiles are exact and not rounded to a bucket.

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  const values = Array.from(sorted);
  const sum = values.reduce((a, b) => a + b, 0);
  return {
    count: values.length,
    mean: values.length ? sum / values.length : NaN,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    max: values.length ? values[values.length - 1] : NaN,
  };
}

/** Rounds for JSON and tables: latencies to 0.01 ms, rates to 0.1/s. */
export const round = (value: number, digits = 2): number => (Number.isFinite(value) ? Number(value.toFixed(digits)) : value);

export function roundSummary(s: LatencySummary, digits = 2): LatencySummary {
  return {
    count: s.count,
    mean: round(s.mean, digits),
    p50: round(s.p50, digits),
    p95: round(s.p95, digits),
    p99: round(s.p99, digits),
    max: round(s.max, digits),
  };
}

/** Wall-clock milliseconds since the epoch with sub-millisecond resolution, comparable with Postgres now(). */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}
