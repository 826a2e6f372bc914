// Stops the embedded Postgres the global setup started (when the machine had none); jest runs this in
// the process that ran the setup, after every test file.
import type { EmbeddedPostgresServer } from '../../apps/devstack/src/local-services';
import { stopLeftoverProcesses } from './leftover-processes';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { embeddedTestPostgres?: EmbeddedPostgresServer }).embeddedTestPostgres?.stop();
  // a suite whose set-up threw may have left what it started: name it, and stop it so the run ends
  for (const p of stopLeftoverProcesses()) {
    process.stderr.write(`global teardown: ${p.args.slice(0, 120)} (pid ${p.pid}) was still running after the suites; a suite did not stop what it started. Stopped it.\n`);
  }
}
