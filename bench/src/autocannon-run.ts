// One autocannon run where every request carries a different body: at a fixed concurrency for a while
// (verify), or a fixed number of requests, optionally at a fixed overall rate (settle, the mixed load).
import autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';

export interface LoadRunResult {
  durationSeconds: number;
  /** answers with status 200, and their latencies (ms) */
  ok: number;
  okLatenciesMs: number[];
  /** status code -> count, for everything that was not 200 */
  otherStatuses: Record<string, number>;
  firstOtherBody?: string;
  /** connection errors and timeouts as autocannon counts them */
  errors: number;
  timeouts: number;
  bodiesUsed: number;
}

/**
 * What autocannon keeps per connection between a request's setupRequest and its answer. With pipelining 1
 * a connection has one request out at a time, so the answer's context is that request's.
 */
export type RequestContext = Record<string, unknown>;

export interface LoadRunOptions {
  url: string;
  path: string;
  connections: number;
  /** run this long; ignored when `amount` is set */
  seconds?: number;
  /** send exactly this many requests, then stop once all are answered */
  amount?: number;
  /**
   * Requests per second over all connections (autocannon's overallRate). autocannon gives each connection
   * a budget per second and spends it as soon as answers allow, so requests leave in a burst at the start
   * of each second: use loadRunAtRate for a rate spread over the second.
   */
  overallRate?: number;
  /** a new body for each request, called just before it is written */
  nextBody(context: RequestContext): string;
  /** each answer with the context of its request */
  onAnswer?(status: number, body: string, context: RequestContext): void;
}

export function loadRun(options: LoadRunOptions): Promise<LoadRunResult> {
  const okLatenciesMs: number[] = [];
  const otherStatuses: Record<string, number> = {};
  let ok = 0;
  let bodiesUsed = 0;
  let firstOtherBody: string | undefined;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        pipelining: 1,
        ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.seconds ?? 10 }),
        ...(options.overallRate !== undefined ? { overallRate: options.overallRate } : {}),
        timeout: 10,
        requests: [
          {
            method: 'POST',
            path: options.path,
            headers: { 'content-type': 'application/json' },
            setupRequest: (request, context) => {
              bodiesUsed++;
              return { ...request, body: options.nextBody(context as RequestContext) };
            },
            onResponse: (status, body, context) => {
              if (status !== 200) firstOtherBody ??= body.slice(0, 500);
              options.onAnswer?.(status, body, context as RequestContext);
            },
          },
        ],
      },
      (err, result) => {
        if (err) return reject(err);
        resolve({
          durationSeconds: result.duration,
          ok,
          okLatenciesMs,
          otherStatuses,
          firstOtherBody,
          errors: result.errors,
          timeouts: result.timeouts,
          bodiesUsed,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode === 200) {
        ok++;
        okLatenciesMs.push(responseTime);
      } else {
        otherStatuses[statusCode] = (otherStatuses[statusCode] ?? 0) + 1;
      }
    });
  });
}

export interface RateRunOptions extends Omit<LoadRunOptions, 'overallRate' | 'connections'> {
  /** whole requests per second */
  ratePerSecond: number;
  /** most requests one connection sends in a second, one after another (default 20) */
  perConnection?: number;
  /** autocannon instances the rate is split over, started this fraction of a second apart (default 10) */
  spread?: number;
}

/** Whole shares of `total`, in proportion to `weights`, summing exactly to `total`. */
function proportional(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  let cumulative = 0;
  let given = 0;
  return weights.map((w) => {
    cumulative += w;
    const upTo = Math.round((total * cumulative) / sum);
    const share = upTo - given;
    given = upTo;
    return share;
  });
}

/**
 * A fixed rate spread over each second. One autocannon instance at overallRate sends each second's
 * budget in a burst at the start of the second; against a chain with 1 s blocks every request would then
 * meet the block timer at the same phase, and the latency would depend on that accidental phase. So the
 * rate is split over `spread` instances started 1/spread s apart, each with a whole share of the rate:
 * at 10/s, one request every 100 ms.
 */
export async function loadRunAtRate(options: RateRunOptions): Promise<LoadRunResult> {
  const rate = Math.max(1, Math.round(options.ratePerSecond));
  const count = Math.max(1, Math.min(options.spread ?? 10, rate, options.amount ?? Infinity));
  const rates = proportional(rate, Array<number>(count).fill(1));
  const amounts = options.amount !== undefined ? proportional(options.amount, rates) : undefined;
  const perConnection = options.perConnection ?? 20;
  const runs = rates.map(async (share, i) => {
    await sleep((i * 1000) / count);
    const amount = amounts?.[i];
    if (amount === 0) return undefined;
    const connections = Math.min(amount ?? Infinity, Math.ceil(share / perConnection));
    return loadRun({ ...options, amount, overallRate: share, connections });
  });
  const results = (await Promise.all(runs)).filter((r): r is LoadRunResult => r !== undefined);
  const otherStatuses: Record<string, number> = {};
  for (const r of results) for (const [code, c] of Object.entries(r.otherStatuses)) otherStatuses[code] = (otherStatuses[code] ?? 0) + c;
  const sum = (f: (r: LoadRunResult) => number) => results.reduce((a, r) => a + f(r), 0);
  return {
    // the instances run equally long, shifted in time: their sum per second is the rate achieved
    durationSeconds: sum((r) => r.durationSeconds) / results.length,
    ok: sum((r) => r.ok),
    okLatenciesMs: results.flatMap((r) => r.okLatenciesMs),
    otherStatuses,
    firstOtherBody: results.find((r) => r.firstOtherBody)?.firstOtherBody,
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    bodiesUsed: sum((r) => r.bodiesUsed),
  };
}
