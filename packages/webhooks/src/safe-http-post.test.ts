import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { safeHttpPost } from './safe-http-post';

// The connection pool of webhook deliveries, against receivers on loopback: reuse, and what a receiver
// that answers with too much or too slowly gets.

async function receiver(answer: (res: http.ServerResponse) => void) {
  const sockets = new Set<Socket>();
  const counts = { connections: 0, closed: 0, requests: 0 };
  const server = http.createServer((req, res) => {
    counts.requests++;
    req.resume();
    req.on('end', () => answer(res));
  });
  server.on('connection', (socket: Socket) => {
    counts.connections++;
    sockets.add(socket);
    socket.on('close', () => {
      counts.closed++;
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
  return {
    url,
    counts,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const post = (url: URL, timeoutMs = 2_000) => safeHttpPost(url, '{"a":1}', {}, { timeoutMs, allowPrivate: true });

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await sleep(10);
}

describe('safeHttpPost', () => {
  it('reuses one connection for deliveries in a row to one receiver', async () => {
    const r = await receiver((res) => res.writeHead(200).end('ok'));
    try {
      for (let i = 0; i < 20; i++) expect((await post(r.url)).statusCode).toBe(200);
      expect(r.counts).toMatchObject({ requests: 20, connections: 1 });
    } finally {
      await r.close();
    }
  });

  it('answers with the status at once and drops the connection of a receiver whose body is too long', async () => {
    const r = await receiver((res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(1024 * 1024));
      res.end();
    });
    try {
      expect((await post(r.url)).statusCode).toBe(200);
      await until(() => r.counts.closed === 1);
      expect(r.counts.closed).toBe(1);
      expect((await post(r.url)).statusCode).toBe(200);
      expect(r.counts.connections).toBe(2);
    } finally {
      await r.close();
    }
  });

  it('answers with the status at once and drops the connection of a receiver whose body never ends', async () => {
    const r = await receiver((res) => {
      res.writeHead(500);
      res.write('still writing');
    });
    try {
      // the status comes before the delivery's timeout, which a wait for the body would reach, and while the
      // receiver's connection is still open; the connection is dropped at the timeout
      const timeoutMs = 1_000;
      const started = Date.now();
      const result = await post(r.url, timeoutMs);
      expect(result.statusCode).toBe(500);
      expect(r.counts.closed).toBe(0);
      expect(Date.now() - started).toBeLessThan(timeoutMs);
      await until(() => r.counts.closed === 1);
      expect(r.counts.closed).toBe(1);
    } finally {
      await r.close();
    }
  });
});

describe('the connect-time lookup (c-ares, the SSRF check on the address connected to)', () => {
  it('connects by name through the resolver only to allowed answers; a busy resolver is reported as such', async () => {
    const { DnsResponder } = await import('./testing/dns-responder');
    const { HostResolver } = await import('./host-resolver');
    const r = await receiver((res) => res.writeHead(200).end());
    const dns = await new DnsResponder((name) => (name === 'slow.test' ? { a: ['127.0.0.1'], delayMs: Infinity } : { a: ['127.0.0.1'] })).start();
    try {
      const resolver = new HostResolver({ servers: [dns.address], timeoutMs: 300, tries: 1, maxInFlight: 1 });
      const named = new URL(`http://shop.test:${r.url.port}/hook`);
      expect(await safeHttpPost(named, '{}', {}, { timeoutMs: 2_000, allowPrivate: true, resolver })).toMatchObject({ statusCode: 200 });
      // the name answers 127.0.0.1: refused without connecting when private addresses are not allowed
      const refused = await safeHttpPost(named, '{}', {}, { timeoutMs: 2_000, allowPrivate: false, resolver });
      expect(refused).toMatchObject({ errorCode: 'EADDRNOTPUBLIC' });
      expect(r.counts.requests).toBe(1);
      const hanging = safeHttpPost(new URL(`http://slow.test:${r.url.port}/`), '{}', {}, { timeoutMs: 2_000, allowPrivate: true, resolver });
      await until(() => resolver.stats.inFlight === 1);
      // another name (a pooled socket to shop.test would need no lookup at all)
      const busy = await safeHttpPost(new URL(`http://other.test:${r.url.port}/`), '{}', {}, { timeoutMs: 2_000, allowPrivate: true, resolver });
      expect(busy).toMatchObject({ errorCode: 'ELOOKUPBUSY' });
      expect(await hanging).toMatchObject({ errorCode: 'ETIMEOUT' });
    } finally {
      await dns.stop();
      await r.close();
    }
  });
});
