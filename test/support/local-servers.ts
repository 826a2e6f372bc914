import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Express } from 'express';

/** Apps a test serves on loopback (our API, a merchant's shop), each at a free port of its own, closed together. */
export class LocalServers {
  private readonly servers: Server[] = [];

  /** Serves `app` on 127.0.0.1; resolves its base URL. */
  listen(app: Express): Promise<string> {
    return new Promise((resolve) => {
      const server = app.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
      this.servers.push(server);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}
