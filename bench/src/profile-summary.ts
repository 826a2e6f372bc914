// `node bench/dist/profile-summary.js <dir-or-.cpuprofile>...`: where the CPU time of V8 profiles went,
// by library (self time of every function, grouped by the package or file it lives in) and by function.
// Used to explain a missed target: run a benchmark with BENCH_CPU_PROF_DIR=<dir> first.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Which part of the stack a script belongs to, from its path. */
export function categoryOf(url: string, functionName: string): string {
  if (!url) {
    if (functionName === '(garbage collector)') return 'GC';
    if (functionName === '(idle)' || functionName === '(program)') return functionName;
    return `native: ${functionName || '(anonymous)'}`;
  }
  const nodeModules = url.lastIndexOf('node_modules/');
  if (nodeModules >= 0) {
    const rest = url.slice(nodeModules + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const ours = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (ours) {
    // Prisma's generated client lives inside packages/db
    if (url.includes('/generated/')) return 'packages/db (generated prisma client)';
    return `${ours[1]}/${ours[2]}`;
  }
  if (url.startsWith('wasm:')) return 'wasm (e.g. Prisma query compiler)';
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return path.basename(url);
}

export function summarizeProfile(profile: Profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const byCategory = new Map<string, number>();
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    total += us;
    const category = categoryOf(url, functionName);
    byCategory.set(category, (byCategory.get(category) ?? 0) + us);
    const owner = ownerOf(id, byId, parent);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + us);
    const fn = `${functionName || '(anonymous)'} ${url ? `${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(apps|packages)\//, '$1/')}:${lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  return { totalMs: total / 1000, byCategory, byOwner, byFunction };
}

/**
 * The library that asked for the work: Node internals and native code (socket writes, JSON, crypto) are
 * charged to the nearest caller outside Node, so "pg" includes its socket writes and "ethers" its HTTP.
 */
function ownerOf(id: number, byId: Map<number, ProfileNode>, parent: Map<number, number>): string {
  const leaf = byId.get(id)!.callFrame;
  let current: number | undefined = id;
  while (current !== undefined) {
    const { url, functionName } = byId.get(current)!.callFrame;
    if (url && !url.startsWith('node:') && !url.startsWith('wasm:')) return categoryOf(url, functionName);
    current = parent.get(current);
  }
  return categoryOf(leaf.url, leaf.functionName);
}

function profilesIn(args: string[]): string[] {
  return args.flatMap((arg) =>
    statSync(arg).isDirectory()
      ? readdirSync(arg)
          .filter((f) => f.endsWith('.cpuprofile'))
          .map((f) => path.join(arg, f))
      : [arg],
  );
}

if (require.main === module) {
  const files = profilesIn(process.argv.slice(2));
  if (files.length === 0) {
    process.stderr.write('usage: node bench/dist/profile-summary.js <dir|file.cpuprofile>...\n');
    process.exit(2);
  }
  const top = Number(process.env.TOP ?? 25);
  for (const file of files) {
    const { totalMs, byCategory, byOwner, byFunction } = summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as Profile);
    const share = (us: number) => `${((us / 1000 / totalMs) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms`;
    process.stdout.write(`\n== ${path.basename(file)}: ${totalMs.toFixed(0)} ms busy (idle excluded)\n-- by library (self time)\n`);
    for (const [name, us] of [...byCategory].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${share(us)}  ${name}\n`);
    process.stdout.write('-- by library, Node internals charged to their caller\n');
    for (const [name, us] of [...byOwner].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${share(us)}  ${name}\n`);
    process.stdout.write('-- by function (self time)\n');
    for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${share(us)}  ${name}\n`);
  }
}
