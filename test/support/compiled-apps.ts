// End-to-end tests run the compiled apps (apps/*/dist), as production does. A build older than the sources
// would test the old code after an edit and a targeted `jest test/x.e2e.test.ts`: refuse it, naming the
// command that rebuilds.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * The newest modification time of the non-test TypeScript sources below `dir` that the build compiles, and
 * which file it is. `excluded`: directories the workspace's tsconfig leaves out (some keep src/testing out of
 * dist): an edit there changes no build, and `tsc -b` would never make it look current.
 */
function newestSource(dir: string, excluded: readonly string[] = []): { file: string; mtimeMs: number } | undefined {
  let newest: { file: string; mtimeMs: number } | undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    // generated code (the Prisma client) is written by `db:generate`, not edited: the build regenerates it
    if (entry.isDirectory() && (entry.name === 'generated' || excluded.includes(full))) continue;
    const found = entry.isDirectory() ? newestSource(full, excluded) : /\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? { file: full, mtimeMs: statSync(full).mtimeMs } : undefined;
    if (found && (!newest || found.mtimeMs > newest.mtimeMs)) newest = found;
  }
  return newest;
}

/**
 * The workspaces (packages/*, apps/*) whose sources changed after their last build (`tsc -b` writes a
 * project's tsconfig.tsbuildinfo whenever it builds it, and leaves it alone while nothing changed).
 */
export function staleWorkspaces(): string[] {
  const stale: string[] = [];
  for (const group of ['packages', 'apps']) {
    for (const name of readdirSync(path.join(ROOT, group))) {
      const workspace = path.join(ROOT, group, name);
      const src = path.join(workspace, 'src');
      const buildInfo = path.join(workspace, 'tsconfig.tsbuildinfo');
      if (!existsSync(src) || !existsSync(path.join(workspace, 'tsconfig.json'))) continue;
      const newest = newestSource(src, excludedDirectories(workspace));
      if (!newest) continue;
      if (!existsSync(buildInfo) || statSync(buildInfo).mtimeMs < newest.mtimeMs) stale.push(path.relative(ROOT, newest.file));
    }
  }
  return stale;
}

/** The directories a workspace's tsconfig.json excludes whole (`src/testing`, `src/testing/**`). */
function excludedDirectories(workspace: string): string[] {
  const exclude = (JSON.parse(readFileSync(path.join(workspace, 'tsconfig.json'), 'utf8')).exclude ?? []) as string[];
  return exclude.filter((pattern) => !pattern.includes('*.')).map((pattern) => path.join(workspace, pattern.replace(/\/\*\*$/, '')));
}

let checked = false;

/** Throws, naming an edited file and the command, when a compiled app would run older code than the sources. */
export function assertBuildIsCurrent(main: string): void {
  if (!existsSync(main)) throw new Error(`${main} is missing: run "npm run build" first (npm test does)`);
  if (checked) return;
  const stale = staleWorkspaces();
  if (stale.length > 0) {
    throw new Error(`the compiled apps are older than ${stale.join(', ')}: run "npm run build" (npm test does) so the end-to-end tests run the code you edited`);
  }
  checked = true;
}
