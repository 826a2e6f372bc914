// A real HTTP server that plays the merchant's webhook endpoint, answering as each test scripts it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ReceivedDelivery {
  at: number;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: Record<string, unknown>;
}

/** What to answer: a status code, or a function of the request number (1-based) for this path. */
export type Script = (attempt: number, req: http.IncomingMessage, res: http.ServerResponse) => void;

export class WebhookReceiver {
  readonly received = new Map<string, ReceivedDelivery[]>();
  private readonly scripts = new Map<string, Script>();
  private server!: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const path = req.url ?? '/';
        const list = this.received.get(path) ?? [];
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(raw);
        } catch {
          // recorded as it came
        }
        list.push({ at: Date.now(), headers: req.headers, rawBody: raw, body });
        this.received.set(path, list);
        const script = this.scripts.get(path) ?? ((_n, _q, r) => r.writeHead(200).end('ok'));
        script(list.length, req, res);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** A fresh path with its own script; returns the full URL to give as webhook_url. */
  endpoint(name: string, script?: Script): string {
    const path = `/${name}`;
    if (script) this.scripts.set(path, script);
    return `${this.url}${path}`;
  }

  deliveries(name: string): ReceivedDelivery[] {
    return this.received.get(`/${name}`) ?? [];
  }

  async waitFor(name: string, count: number, timeoutMs = 20_000): Promise<ReceivedDelivery[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.deliveries(name).length < count) {
      if (Date.now() > deadline) throw new Error(`${name}: ${this.deliveries(name).length} of ${count} deliveries arrived`);
      await sleep(25);
    }
    return this.deliveries(name);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
