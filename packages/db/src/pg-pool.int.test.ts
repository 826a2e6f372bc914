// A connection lost while checked out of the pool (a send lock held across an RPC call, a transaction's
// work between statements) must not crash the process: pg-pool listens for a client's errors only while it
// is idle, and a `pg` client with no query running emits the server's "terminating connection" as an
// 'error' event, which crashed the worker in the Postgres-restart scenario. The process that holds the
// connection is a child, so a crash is seen as its exit, as in production.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

// holds one connection checked out, says its backend pid, and once the connection has ended (the test
// terminated it) uses the pool again
const HOLDER = `
const { createPgPool } = require(${JSON.stringify(path.join(__dirname, 'pg-pool.ts'))});
(async () => {
  const pool = createPgPool(process.env.DATABASE_URL, 2);
  const client = await pool.connect();
  const ended = new Promise((resolve) => client.once('end', resolve));
  const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
  console.log('pid ' + rows[0].pid);
  await ended;
  const lost = await client.query('SELECT 1').then(() => 'answered', () => 'refused');
  client.release(true);
  const again = await pool.query('SELECT 1 AS one');
  console.log('the lost connection ' + lost + '; the pool answers ' + again.rows[0].one);
  await pool.end();
})();
`;

it('a checked-out connection terminated by the server fails its next query instead of crashing the process', async () => {
  const child = spawn(process.execPath, ['-r', 'esbuild-register', '-e', HOLDER], {
    env: { ...process.env, DATABASE_URL: db.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const pid = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /pid (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    void exited.then((code) => reject(new Error(`the holder exited (${code}) before connecting: ${err}`)));
  });

  // what a fast shutdown or a restart does to every connection
  const { rows } = await db.pool.query<{ terminated: boolean }>('SELECT pg_terminate_backend($1) AS terminated', [pid]);
  expect(rows[0].terminated).toBe(true);

  const code = await exited;
  expect({ code, stderr: err.slice(0, 2_000) }).toEqual({ code: 0, stderr: '' });
  expect(out).toContain('the lost connection refused; the pool answers 1');
}, 30_000);

it("runs its statements without Postgres's JIT, whatever the server's default", async () => {
  const { rows } = await db.pool.query<{ jit: string }>('SHOW jit');
  expect(rows[0].jit).toBe('off');
  // the server's own default here is on: the setting is the pool's doing
  const { rows: server } = await db.pool.query<{ boot_val: string }>("SELECT boot_val FROM pg_settings WHERE name = 'jit'");
  expect(server[0].boot_val).toBe('on');
});
