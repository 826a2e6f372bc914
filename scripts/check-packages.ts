// Guardrails run by `npm run lint`: every workspace package declares the workspace packages and libraries
// its sources import; packages never import apps; there is no import cycle between packages; only tests
// import a package's test helpers (`@facilitator/<name>/testing`); every workspace package a compiled source
// imports (src/testing included, `*.test.ts` excluded) is a project reference in its tsconfig.json, or a build
// on a clean clone compiles it before what it imports and fails (only a machine with an old dist/ passes).
// Public surfaces: a package's index names what it exports (no `export *`), and its package.json has an
// `exports` map (".", and "./testing" where src/testing/index.ts exists) so no other file of dist/ is reachable.
// `--fix` writes the missing declarations (versions from the root package.json, workspaces as "*").
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..');
const fix = process.argv.includes('--fix');
const rootManifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const rootVersions: Record<string, string> = { ...rootManifest.devDependencies, ...rootManifest.dependencies };
const builtins = new Set(builtinModules);

interface Workspace {
  dir: string;
  name: string;
  kind: 'package' | 'app';
  manifest: Record<string, Record<string, string> | string>;
}

const workspaces: Workspace[] = ['packages', 'apps'].flatMap((group) =>
  readdirSync(path.join(ROOT, group)).map((entry) => {
    const dir = path.join(ROOT, group, entry);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    return { dir, name: manifest.name as string, kind: group === 'packages' ? ('package' as const) : ('app' as const), manifest };
  }),
);
const byName = new Map(workspaces.map((w) => [w.name, w]));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (entry === 'generated' || entry === 'node_modules' || entry === 'dist') return [];
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

/** The package a specifier names: "@scope/name" or "name"; undefined for relative paths and builtins. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:') || builtins.has(specifier.split('/')[0])) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)|import\(\s*['"]([^'"]+)['"]\s*\)/g;

// a workspace package's test helpers (`@facilitator/db/testing`): factories and fakes, never shipped code
const TESTING_SUBPATH = /^@facilitator\/[a-z-]+\/testing(\/|$)/;

const problems: string[] = [];
const graph = new Map<string, Set<string>>();
for (const workspace of workspaces) {
  const runtime = new Set<string>();
  const testOnly = new Set<string>();
  const compiled = new Set<string>();
  for (const file of sourceFiles(path.join(workspace.dir, 'src'))) {
    // test files and the fakes and fixtures only tests use (src/testing/)
    const isTest = file.endsWith('.test.ts') || file.includes(`${path.sep}testing${path.sep}`);
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3];
      if (!isTest && TESTING_SUBPATH.test(specifier)) problems.push(`${path.relative(ROOT, file)} imports ${specifier}: a package's test helpers are for tests only`);
      const name = packageOf(specifier);
      if (!name || name === workspace.name) continue;
      (isTest ? testOnly : runtime).add(name);
      if (!file.endsWith('.test.ts') && byName.has(name)) compiled.add(name);
      const target = byName.get(name);
      if (target?.kind === 'app' && !isTest) problems.push(`${workspace.name} imports the app ${name} (${path.relative(ROOT, file)}): packages and apps never import apps`);
    }
  }
  for (const name of runtime) testOnly.delete(name);
  const references = new Set(
    ((JSON.parse(readFileSync(path.join(workspace.dir, 'tsconfig.json'), 'utf8')).references ?? []) as { path: string }[]).map((r) =>
      path.resolve(workspace.dir, r.path),
    ),
  );
  for (const name of compiled) {
    if (!references.has(byName.get(name)!.dir)) problems.push(`${workspace.name} compiles an import of ${name} but its tsconfig.json has no reference to ${path.relative(workspace.dir, byName.get(name)!.dir)}`);
  }
  graph.set(workspace.name, new Set([...runtime].filter((n) => byName.has(n))));
  const declared = (field: string) => (workspace.manifest[field] ?? {}) as Record<string, string>;
  const missing = (names: Set<string>, field: 'dependencies' | 'devDependencies') =>
    [...names].filter((n) => !declared('dependencies')[n] && !(field === 'devDependencies' && declared('devDependencies')[n]));
  for (const [field, names] of [['dependencies', runtime], ['devDependencies', testOnly]] as const) {
    for (const name of missing(names, field)) {
      const version = byName.has(name) ? '*' : rootVersions[name];
      if (!version) {
        // a transitive package reached directly (e.g. ws through ethers): it must be a root dependency first
        problems.push(`${workspace.name} imports ${name}, which the root package.json does not list`);
        continue;
      }
      if (fix) {
        workspace.manifest[field] = Object.fromEntries(Object.entries({ ...declared(field), [name]: version }).sort(([a], [b]) => a.localeCompare(b)));
      } else problems.push(`${workspace.name} imports ${name} but does not declare it in ${field}`);
    }
  }
  if (fix) writeFileSync(path.join(workspace.dir, 'package.json'), JSON.stringify(workspace.manifest, null, 2) + '\n');
}

// public surfaces: what a package's index exports is named there, and nothing past its `exports` is reachable
const EXPORT_STAR = /^\s*export\s+(?:type\s+)?\*/;
for (const workspace of workspaces.filter((w) => w.kind === 'package')) {
  const index = path.join(workspace.dir, 'src', 'index.ts');
  readFileSync(index, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (EXPORT_STAR.test(line)) {
        problems.push(`${path.relative(ROOT, index)}:${i + 1}: \`${line.trim()}\`: a package index names what it exports (export { a, type B } from './x')`);
      }
    });
  const exportsMap = workspace.manifest.exports as Record<string, { types?: string; default?: string }> | undefined;
  const manifestPath = path.relative(ROOT, path.join(workspace.dir, 'package.json'));
  if (!exportsMap || typeof exportsMap !== 'object') {
    problems.push(`${manifestPath} has no "exports" (".": ./dist/index.d.ts and ./dist/index.js, "./testing" where src/testing/index.ts exists): without it any file of dist/ can be imported`);
    continue;
  }
  const hasTesting = statSync(path.join(workspace.dir, 'src', 'testing', 'index.ts'), { throwIfNoEntry: false })?.isFile() ?? false;
  if (!exportsMap['.']) problems.push(`${manifestPath}: "exports" has no "." entry`);
  if (hasTesting && !exportsMap['./testing']) problems.push(`${manifestPath}: "exports" has no "./testing" entry, but the package has src/testing/index.ts`);
  for (const [subpath, targets] of Object.entries(exportsMap)) {
    // every target is a compiled file of src/ (dist/x.js and dist/x.d.ts come from src/x.ts)
    for (const target of [targets?.types, targets?.default]) {
      const source = target && /^\.\/dist\/(.+?)(?:\.d\.ts|\.js)$/.exec(target)?.[1];
      if (!source || !statSync(path.join(workspace.dir, 'src', `${source}.ts`), { throwIfNoEntry: false })?.isFile()) {
        problems.push(`${manifestPath}: "exports" entry "${subpath}" points at ${target ?? 'nothing'}, which no file of src/ compiles to`);
      }
    }
  }
}

// cycles between workspace packages: depth-first search over the runtime import graph
const state = new Map<string, 'visiting' | 'done'>();
function visit(name: string, trail: string[]): void {
  if (state.get(name) === 'done') return;
  if (state.get(name) === 'visiting') {
    problems.push(`import cycle: ${[...trail.slice(trail.indexOf(name)), name].join(' -> ')}`);
    return;
  }
  state.set(name, 'visiting');
  for (const next of graph.get(name) ?? []) visit(next, [...trail, name]);
  state.set(name, 'done');
}
for (const name of graph.keys()) visit(name, []);

if (problems.length > 0) {
  process.stderr.write(problems.map((p) => `check-packages: ${p}\n`).join(''));
  process.exit(1);
}
process.stdout.write(
  `check-packages: ${workspaces.length} workspaces declare what they import and reference what they compile; no cycles; no package imports an app; every package index names its exports and every package.json has "exports"\n`,
);
