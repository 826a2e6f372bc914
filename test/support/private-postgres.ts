// A Postgres 15 instance of the test's own (initdb into a temp dir, trust auth, a free loopback port),
// which the test may stop and start at will. The machine's shared Postgres is never touched.
import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort } from './ports';
import { setTimeout as sleep } from 'node:timers/promises';

const DEFAULT_BIN_DIR = '/usr/lib/postgresql/15/bin';

export interface PrivatePostgres {
  port: number;
  /** URL of the `postgres` database, as the superuser `postgres` (trust auth) */
  adminUrl: string;
  /** URL of a database of this instance */
  url(database: string): string;
  createDatabase(name: string): Promise<string>;
  /** `pg_ctl stop -m <mode>`: every connection is cut; new ones are refused until start() */
  stop(mode?: 'smart' | 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** stop (fast), stay down `downMs`, start again on the same port and data directory */
  restart(downMs?: number): Promise<void>;
  isRunning(): boolean;
  /** the server log (for a failing test's message) */
  log(): string;
  /** stops the instance (immediate) and deletes its directory; safe to call twice */
  destroy(): Promise<void>;
}

function chownTree(target: string, uid: number, gid: number): void {
  chownSync(target, uid, gid);
  if (statSync(target).isDirectory()) for (const entry of readdirSync(target)) chownTree(path.join(target, entry), uid, gid);
}

export async function startPrivatePostgres(options: { binDir?: string } = {}): Promise<PrivatePostgres> {
  const binDir = options.binDir ?? process.env.TEST_PG_BIN_DIR ?? DEFAULT_BIN_DIR;
  if (!existsSync(path.join(binDir, 'pg_ctl'))) throw new Error(`no Postgres binaries in ${binDir} (set TEST_PG_BIN_DIR)`);
  // initdb and postgres refuse to run as root: run them as the `postgres` user then.
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot
    ? { uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()), gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()) }
    : undefined;
  const command = (bin: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(binDir, bin), ...args]] : [path.join(binDir, bin), args];
  const run = (bin: string, args: string[], timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const [file, argv] = command(bin, args);
      execFile(file, argv, { timeout: timeoutMs }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
        else resolve(stdout);
      });
    });

  const dir = mkdtempSync(path.join(tmpdir(), 'private-pg-'));
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  if (owner) chownTree(dir, owner.uid, owner.gid);
  const port = await freePort();

  let running = false;
  // If the test process dies without destroy(), do not leave a postmaster behind.
  const onExit = () => {
    if (!running) return;
    try {
      const [file, argv] = command('pg_ctl', ['-D', data, 'stop', '-m', 'immediate', '-w', '-t', '10']);
      execFileSync(file, argv, { stdio: 'ignore', timeout: 15_000 });
    } catch {
      // best effort
    }
  };
  process.once('exit', onExit);

  try {
    await run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    appendFileSync(
      path.join(data, 'postgresql.conf'),
      [
        '',
        `port = ${port}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        'max_connections = 200',
        'fsync = off',
        'full_page_writes = off',
        "shared_buffers = '32MB'",
        'logging_collector = off',
        '',
      ].join('\n'),
    );
  } catch (err) {
    process.removeListener('exit', onExit);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  const adminUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const start = async () => {
    await run('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '60', 'start']);
    running = true;
  };
  const stop = async (mode: 'smart' | 'fast' | 'immediate' = 'fast') => {
    if (!running) return;
    await run('pg_ctl', ['-D', data, '-w', '-t', '60', 'stop', '-m', mode]);
    running = false;
  };

  try {
    await start();
  } catch (err) {
    const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    process.removeListener('exit', onExit);
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(err as Error).message}\n${log}`, { cause: err });
  }

  let destroyed = false;
  return {
    port,
    adminUrl,
    url: (database) => `postgresql://postgres@127.0.0.1:${port}/${database}`,
    async createDatabase(name) {
      const admin = new Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE "${name}"`);
      } finally {
        await admin.end();
      }
      return `postgresql://postgres@127.0.0.1:${port}/${name}`;
    },
    stop,
    start,
    async restart(downMs = 3_000) {
      await stop('fast');
      await sleep(downMs);
      await start();
    },
    isRunning: () => running,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      try {
        await stop('immediate');
      } finally {
        process.removeListener('exit', onExit);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

