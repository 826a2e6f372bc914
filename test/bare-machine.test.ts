// `npm run dev` on a machine with only Node.js: in a network namespace that has only loopback (so the
// machine's Postgres and Redis are out of reach, and the Postgres socket directory is hidden), the dev
// stack starts an embedded Postgres, runs the queues on BullMQ's PostgreSQL backend, says so in its
// banner, answers /readyz 200, and the example it prints verifies and settles a payment.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { assertServicesUnreachable, BARE_NAMESPACE_PREAMBLE } from './support/bare-namespace';
import { bareNamespaceMissing, describeNeeding } from './support/system-tools';

const ROOT = path.resolve(__dirname, '..');

const SCRIPT = `
set -u
${BARE_NAMESPACE_PREAMBLE}
${assertServicesUnreachable([5432, 6379])}
node apps/devstack/dist/main.js > "$OUT/dev.log" 2>&1 &
DEV=$!
for _ in $(seq 1 900); do
  grep -q 'Ctrl-C stops everything' "$OUT/dev.log" && break
  kill -0 $DEV 2>/dev/null || break
  sleep 0.2
done
curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:4020/readyz > "$OUT/readyz"
grep '^curl -s -X POST .*/v1/verify ' "$OUT/dev.log" | bash > "$OUT/verify.json"
grep '^curl -s -X POST .*/v1/settle ' "$OUT/dev.log" | bash > "$OUT/settle.json"
kill -TERM $DEV
wait $DEV
echo $? > "$OUT/dev-exit"
`;

describeNeeding(bareNamespaceMissing(), 'npm run dev on a bare machine', () => {
  const out = mkdtempSync(path.join(tmpdir(), 'bare-machine-'));
  // the embedded Postgres runs as the postgres user when we are root: it must reach its data directory
  chmodSync(out, 0o755);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('starts embedded Postgres and the PostgreSQL queue backend, is ready, and the printed example settles', () => {
    const run = spawnSync('unshare', ['-n', '-m', 'bash', '-c', SCRIPT], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 240_000,
      // nothing of the machine's own configuration: the defaults must do
      env: { PATH: process.env.PATH, HOME: process.env.HOME, OUT: out, DEV_STACK_DIR: path.join(out, 'state') },
    });
    const read = (name: string) => {
      try {
        return readFileSync(path.join(out, name), 'utf8');
      } catch {
        return '';
      }
    };
    const log = read('dev.log');
    const context = `exit ${run.status}; ${run.stdout}\n${run.stderr}\n--- dev.log ---\n${log.slice(-4000)}`;
    expect({ readyz: read('readyz'), context: read('readyz') === '200' ? '' : context }).toEqual({ readyz: '200', context: '' });
    expect(log).toMatch(/postgres {5}embedded on 127\.0\.0\.1:\d+, data in .*postgres \(nothing answered at 127\.0\.0\.1:5432\)/);
    expect(log).toContain("queues       BullMQ's PostgreSQL backend in the database above (no Redis answered at 127.0.0.1:6379)");
    const verify = JSON.parse(read('verify.json') || '{}');
    expect({ isValid: verify.isValid, context: verify.isValid ? '' : context }).toEqual({ isValid: true, context: '' });
    const settle = JSON.parse(read('settle.json') || '{}');
    expect({ success: settle.success, context: settle.success ? '' : `${read('settle.json')}\n${context}` }).toEqual({ success: true, context: '' });
    expect(settle.details.fee_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(settle.details.settlement_tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(read('dev-exit').trim()).toBe('0');
    // the embedded Postgres stops after the API and the worker have drained, so neither loses its database
    expect(log.split('\n').filter((line) => /"level":"error"|unhandled|terminating connection/i.test(line))).toEqual([]);
  }, 300_000);
});

