// Records every answer an app gives (status, JSON body, time), whoever the client is: wrap the app (or a
// forwarder to an API running as its own process), hand the wrapper to supertest, and every request of a
// scenario is on the record.
import { request, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';

export interface RecordedAnswer {
  /** Date.now() when the request arrived and when the answer was finished */
  startedAt: number;
  at: number;
  method: string;
  path: string;
  status: number;
  retryAfter?: string;
  /** the API's X-Request-Id, to find what it logged about this request */
  requestId?: string;
  /** the parsed JSON body, or the raw text when it is not JSON */
  body: unknown;
}

export interface AnswerRecorder {
  listener: RequestListener;
  answers: RecordedAnswer[];
}

export function recordAnswers(app: RequestListener): AnswerRecorder {
  const answers: RecordedAnswer[] = [];
  const listener: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
    const startedAt = Date.now();
    const chunks: Buffer[] = [];
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.write = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return write(...args);
    }) as ServerResponse['write'];
    res.end = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return end(...args);
    }) as ServerResponse['end'];
    res.on('finish', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      const retryAfter = res.getHeader('retry-after');
      const requestId = res.getHeader('x-request-id');
      answers.push({
        startedAt,
        at: Date.now(),
        method: req.method ?? '',
        path: (req.url ?? '').split('?')[0],
        status: res.statusCode,
        retryAfter: retryAfter === undefined ? undefined : String(retryAfter),
        requestId: requestId === undefined ? undefined : String(requestId),
        body,
      });
    });
    app(req, res);
  };
  return { listener, answers };
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade']);

/**
 * A request listener that forwards each request to `baseUrl` (e.g. the compiled API started with
 * startApiProcess) and relays the answer. When the API cannot be reached the client gets 599, so an API
 * that died counts as a failure like any other 5xx.
 */
export function forwardTo(baseUrl: string): RequestListener {
  const target = new URL(baseUrl);
  return (req, res) => {
    const upstream = request(
      // a fresh connection per request: nothing to go stale between requests
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent: false },
      (answer) => {
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value !== undefined && !HOP_BY_HOP.has(name)) res.setHeader(name, value);
        }
        res.statusCode = answer.statusCode ?? 599;
        answer.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) {
        res.statusCode = 599;
        res.setHeader('content-type', 'text/plain');
      }
      res.end(`could not reach the API: ${err.message}`);
    });
    req.pipe(upstream);
  };
}

/** "200×41, 503×12" */
export function statusHistogram(answers: ReadonlyArray<{ status: number }>): string {
  const counts = new Map<number, number>();
  for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${status}×${n}`)
    .join(', ');
}

/** Whether an answer is our error envelope with this code and a message. */
export function isEnvelope(body: unknown, code: string): boolean {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof error === 'object' && error !== null && error.code === code && typeof error.message === 'string' && error.message.length > 0;
}

/** Signs of internals leaking into an answer: a stack trace, or driver/ORM wording. */
export function leaksInternals(body: unknown): boolean {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return /\n\s+at |\bat [\w.<>]+ \(.*:\d+:\d+\)|"stack"|Prisma|DriverAdapter|node_modules/.test(text);
}
