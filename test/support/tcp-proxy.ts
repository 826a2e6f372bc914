// A TCP proxy the test can cut: close() refuses new connections (nothing listens on the port) and
// resets every open one; open() listens again on the same port. Put it in front of a dependency (e.g.
// anvil's JSON-RPC port) to simulate that dependency's endpoint going away and coming back.
import { readFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface TcpProxy {
  port: number;
  host: string;
  /** http://host:port, for an HTTP service behind the proxy */
  url: string;
  /** Where connections go; may be set after the proxy started (connections before that are reset). */
  setTarget(port: number, host?: string): void;
  isOpen(): boolean;
  /** Stops listening (new connections are refused) and resets every open connection. */
  close(): Promise<void>;
  /** Listens again on the same port. */
  open(): Promise<void>;
  /** connections accepted so far, and connections reset by close() */
  stats(): { accepted: number; reset: number };
  /** close() for good */
  stop(): Promise<void>;
}


/**
 * A free port below the kernel's ephemeral range: while the proxy is closed, no outgoing connection of
 * this machine can be given that port as its source port, so open() gets it back.
 */
async function freeStablePort(host: string): Promise<number> {
  let low = 32768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // not Linux: keep the usual default
  }
  const floor = 20_000;
  const span = Math.max(1_000, low - floor);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = floor + Math.floor(Math.random() * span);
    if (await canListen(port, host)) return port;
  }
  throw new Error('no free port found for the TCP proxy');
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => {
      server.removeListener('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.removeListener('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

function reset(socket: Socket): void {
  if (socket.destroyed) return;
  // RST, as a vanished endpoint or a cut network would look; plain destroy() where unavailable
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}

export async function startTcpProxy(options: { targetPort?: number; targetHost?: string; host?: string; port?: number } = {}): Promise<TcpProxy> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? (await freeStablePort(host));
  let target = options.targetPort === undefined ? undefined : { port: options.targetPort, host: options.targetHost ?? '127.0.0.1' };
  const open = new Set<{ client: Socket; upstream: Socket }>();
  let accepted = 0;
  let resetCount = 0;

  const server = createServer({ pauseOnConnect: true }, (client) => {
    accepted++;
    if (!target) {
      reset(client);
      return;
    }
    const upstream = createConnection({ port: target.port, host: target.host });
    const pair = { client, upstream };
    open.add(pair);
    const teardown = () => {
      open.delete(pair);
      reset(client);
      reset(upstream);
    };
    // an error or close on either side ends both (as a plain TCP relay would)
    client.on('error', teardown);
    upstream.on('error', teardown);
    client.on('close', teardown);
    upstream.on('close', teardown);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  });

  let listening = false;
  async function openProxy(): Promise<void> {
    if (listening) return;
    // the port is ours (below the ephemeral range), but give a lingering bind a moment just in case
    for (let attempt = 0; ; attempt++) {
      try {
        await listen(server, port, host);
        listening = true;
        return;
      } catch (err) {
        if ((err as { code?: string }).code !== 'EADDRINUSE' || attempt >= 50) throw err;
        await sleep(100);
      }
    }
  }
  async function closeProxy(): Promise<void> {
    if (!listening) return;
    listening = false;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const { client, upstream } of [...open]) {
      resetCount++;
      reset(client);
      reset(upstream);
    }
    open.clear();
    await closed;
  }

  await openProxy();
  return {
    port,
    host,
    url: `http://${host}:${port}`,
    setTarget(targetPort, targetHost = '127.0.0.1') {
      target = { port: targetPort, host: targetHost };
    },
    isOpen: () => listening,
    close: closeProxy,
    open: openProxy,
    stats: () => ({ accepted, reset: resetCount }),
    stop: closeProxy,
  };
}
