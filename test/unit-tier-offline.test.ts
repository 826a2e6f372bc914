// The unit tier (`npm run test:unit`) needs no Postgres, Redis or anvil: run it in a network namespace
// with only loopback, where the machine's Postgres and Redis are out of reach (their TCP ports are in
// another namespace, the Postgres socket directory is hidden behind an empty tmpfs).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { assertServicesUnreachable, BARE_NAMESPACE_PREAMBLE } from './support/bare-namespace';
import { bareNamespaceMissing, describeNeeding } from './support/system-tools';

const ROOT = path.resolve(__dirname, '..');

// the probes must fail inside; jest's own exit status is the tier's verdict
const SCRIPT = `
set -u
${BARE_NAMESPACE_PREAMBLE}
${assertServicesUnreachable([5432, 6379, 8545])}
if [ -S /var/run/postgresql/.s.PGSQL.5432 ]; then echo "postgres socket visible"; exit 91; fi
exec node_modules/.bin/jest --selectProjects unit --ci
`;

describeNeeding(bareNamespaceMissing(), 'npm run test:unit with no services reachable', () => {
  it('passes in a network namespace that has only loopback', () => {
    const started = Date.now();
    const run = spawnSync('unshare', ['-n', '-m', 'bash', '-c', SCRIPT], { cwd: ROOT, encoding: 'utf8', timeout: 180_000, env: { ...process.env, CI: 'true' } });
    const output = `${run.stdout}\n${run.stderr}`;
    const summary = /Tests:\s+(\d+) passed, (\d+) total/.exec(output);
    process.stdout.write(`unit tier offline: ${summary?.[1] ?? '?'} tests in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    expect({ status: run.status, tail: run.status === 0 ? '' : output.slice(-3000) }).toEqual({ status: 0, tail: '' });
    expect(Number(summary?.[1])).toBeGreaterThan(300);
    expect(summary?.[1]).toBe(summary?.[2]);
  }, 200_000);
});

