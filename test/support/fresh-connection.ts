// HTTP over a new TCP connection per request. fetch keeps connections alive, and a Node cluster hands out
// connections (not requests) to its processes, so only fresh connections spread requests over them.
import http from 'node:http';

export interface PlainResponse {
  status: number;
  text: string;
  json<T = unknown>(): T;
}

export function requestOnFreshConnection(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<PlainResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method,
        agent: false,
        headers: { connection: 'close', ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, json: () => JSON.parse(text) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.end(payload);
  });
}
