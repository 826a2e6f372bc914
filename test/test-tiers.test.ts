// The tiers (jest projects in jest.config.ts) keep `npm test` honest only if together they hold every test
// file exactly once: a file in no tier never runs, a file in two runs twice. Jest itself is asked which
// files each tier holds, so a change of its matching rules cannot make this check drift from the runs.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import config from '../jest.config';

const ROOT = path.resolve(__dirname, '..');
const TIERS = (config.projects ?? []).map((project) => (typeof project === 'object' ? String(project.displayName) : String(project)));

function listTests(args: string[]): string[] {
  const run = spawnSync(path.join(ROOT, 'node_modules/.bin/jest'), ['--listTests', '--json', ...args], { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`jest --listTests ${args.join(' ')} failed: ${run.stderr}`);
  return (JSON.parse(run.stdout) as string[]).map((file) => path.relative(ROOT, file)).sort();
}

/** Every test file in the repository, found without jest. */
function testFilesOnDisk(): string[] {
  return ['packages', 'apps', 'test']
    .flatMap((dir) => readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((file) => path.join(dir, file)))
    .filter((file) => file.endsWith('.test.ts') && !/(^|\/)(node_modules|dist)\//.test(file))
    .sort();
}

describe('test tiers', () => {
  it('are the seven docs/development.md lists, each with its npm script', () => {
    expect(TIERS).toEqual(['unit', 'int', 'e2e', 'reliability', 'abuse', 'browser', 'repo']);
    const scripts: Record<string, string> = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
    for (const tier of TIERS) expect({ tier, script: scripts[`test:${tier}`] }).toEqual({ tier, script: expect.stringContaining(`jest --selectProjects ${tier}`) });
  });

  it('hold every test file exactly once', () => {
    const tiersOf = new Map<string, string[]>(testFilesOnDisk().map((file) => [file, []]));
    for (const tier of TIERS) {
      const held = listTests(['--selectProjects', tier]);
      expect({ tier, empty: held.length === 0 }).toEqual({ tier, empty: false });
      for (const file of held) tiersOf.set(file, [...(tiersOf.get(file) ?? []), tier]);
    }
    const notInOne = [...tiersOf].filter(([, tiers]) => tiers.length !== 1).map(([file, tiers]) => `${file}: ${tiers.join(', ') || 'no tier'}`);
    expect(notInOne).toEqual([]);
    // and `jest` with no tier selected (what `npm test` runs) runs exactly those files
    expect(listTests([])).toEqual([...tiersOf.keys()]);
  }, 120_000);
});
