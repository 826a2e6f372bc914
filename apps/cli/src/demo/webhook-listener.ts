import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Delivery {
  rawBody: string;
  signature: string | undefined;
  body: Record<string, unknown>;
}

/** The merchant's webhook endpoint for the demo: a local HTTP server that keeps every delivery as received. */
export class WebhookListener {
  readonly deliveries: Delivery[] = [];
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(rawBody) as Record<string, unknown>;
      } catch {
        // kept raw; its signature check says why
      }
      const header = req.headers['x-webhook-signature'];
      this.deliveries.push({ rawBody, signature: Array.isArray(header) ? header[0] : header, body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  url = '';

  async start(path: string): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', resolve);
    });
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
    return this.url;
  }

  /** Resolves with the first delivery that matches, or undefined after the timeout. */
  async waitFor(match: (d: Delivery) => boolean, timeoutMs: number): Promise<Delivery | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.deliveries.find(match);
      if (found || Date.now() > deadline) return found;
      await sleep(50);
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
