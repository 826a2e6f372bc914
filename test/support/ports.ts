import { createServer } from 'node:net';

/**
 * A port the system just gave out and took back: free right now (a tiny race with other programs), and
 * nothing listens on it, which is also what a test wants for an endpoint that refuses connections.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
      .once('error', reject)
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
  });
}
