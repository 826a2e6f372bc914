// Stops the embedded Postgres the global setup started (when the machine had none); jest runs this in
// the process that ran the setup, after every test file.
import type { EmbeddedPostgresServer } from '../../apps/devstack/src/local-services';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { embeddedTestPostgres?: EmbeddedPostgresServer }).embeddedTestPostgres?.stop();
}
