// `npm test` on a machine with only Node.js: in a network namespace that has only loopback (the
// machine's Postgres and Redis out of reach), jest's global setup starts an embedded Postgres, the
// queues run on BullMQ's PostgreSQL backend, and the tests that need Redis itself say in one line why
// they are skipped. A sample of the tiers runs here (a repository and the queue store, the settlement
// pipeline end to end, the security suite); the whole suite was run so once by hand (docs/decisions.md).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertServicesUnreachable, BARE_NAMESPACE_PREAMBLE } from './support/bare-namespace';
import { bareNamespaceMissing, describeNeeding } from './support/system-tools';

const ROOT = path.resolve(__dirname, '..');
const SAMPLE = ['packages/db/src/repositories/merchant-repository.int.test.ts', 'packages/queue/src/queue-store.int.test.ts', 'test/settle.e2e.test.ts', 'test/security.e2e.test.ts'];

const SCRIPT = `
set -u
${BARE_NAMESPACE_PREAMBLE}
${assertServicesUnreachable([5432, 6379])}
exec node_modules/.bin/jest --ci ${SAMPLE.join(' ')}
`;

describeNeeding(bareNamespaceMissing(), 'npm test with no Postgres and no Redis reachable', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bare-tests-'));
  // the embedded Postgres runs as the postgres user when we are root: it must reach its data directory
  chmodSync(dataDir, 0o755);
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs on an embedded Postgres with the queues on PostgreSQL, and says which tests need Redis', () => {
    // none of this run's own service settings: the inner run must find out for itself
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('TEST_')));
    const run = spawnSync('unshare', ['-n', '-m', 'bash', '-c', SCRIPT], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 400_000,
      env: { ...env, CI: 'true', TEST_EMBEDDED_POSTGRES_DIR: path.join(dataDir, 'postgres') },
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect({ status: run.status, tail: run.status === 0 ? '' : output.slice(-4000) }).toEqual({ status: 0, tail: '' });
    expect(output).toContain('tests use an embedded Postgres on 127.0.0.1:54339 (nothing answered at 127.0.0.1:5432)');
    expect(output).toContain("tests run the queues on BullMQ's PostgreSQL backend (no Redis answered at 127.0.0.1:6379)");
    expect(output).toContain('skipped "QueueStore on redis": it needs Redis itself and no Redis answered at 127.0.0.1:6379');
    expect(output).toContain('skipped "rate limiting": it needs Redis itself and no Redis answered at 127.0.0.1:6379');
    const summary = /Tests:\s+(?:(\d+) skipped, )?(\d+) passed, (\d+) total/.exec(output);
    expect(Number(summary?.[2])).toBeGreaterThan(20);
  }, 420_000);
});

