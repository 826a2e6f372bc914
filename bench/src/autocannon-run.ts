// One fixed-concurrency autocannon run where every request carries a different, pre-made body.
import autocannon from 'autocannon';

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

export interface LoadRunOptions {
  url: string;
  path: string;
  connections: number;
  seconds: number;
  /** a new body for each request */
  nextBody(): string;
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
        duration: options.seconds,
        timeout: 10,
        requests: [
          {
            method: 'POST',
            path: options.path,
            headers: { 'content-type': 'application/json' },
            setupRequest: (request) => {
              bodiesUsed++;
              return { ...request, body: options.nextBody() };
            },
            onResponse: (status, body) => {
              if (status !== 200) firstOtherBody ??= body.slice(0, 500);
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
