// Which build of the facilitator a benchmark runs: this checkout's, or an older commit's built in a
// temporary git worktree (bench:capacity's baseline, issue 41: "Form B with automine ≥ 2× the rate of
// commit b3237c9 measured in the same run"). The benchmark's own code (load, timing, reading outcomes)
// stays this checkout's, so both builds are measured by the same harness; what is the build's own — the
// compiled API and worker, its migrations, and its devnet (USDC and the settlement executor it expects) —
// comes from the tree measured.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as currentDevnet from '@facilitator/evm-devnet';
import { log } from './results';
import { API_MAIN, ROOT, WORKER_MAIN } from './stack';

type DevnetModule = Pick<typeof currentDevnet, 'startDevnet' | 'setUpDevnetExecutor'>;

export interface CodeTree {
  /** 'current', or the older commit's short hash */
  label: string;
  /** the commit (short hash; `(apps/packages modified)` when this checkout has uncommitted changes there) */
  commit: string;
  root: string;
  apiMain: string;
  workerMain: string;
  migrationsDir: string;
  devnet: DevnetModule;
  /** the benchmark's app environment as this build takes it (an older build refuses or reads some values otherwise) */
  adaptEnv(env: Record<string, string>): Record<string, string>;
}

function git(args: string[], cwd = ROOT): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

export function currentTree(): CodeTree {
  let commit = 'unknown';
  try {
    commit = git(['rev-parse', '--short', 'HEAD']);
    if (git(['status', '--porcelain', '--', 'apps', 'packages'])) commit += ' (apps/packages modified)';
  } catch {
    // not a git checkout
  }
  return { label: 'current', commit, root: ROOT, apiMain: API_MAIN, workerMain: WORKER_MAIN, migrationsDir: path.join(ROOT, 'prisma/migrations'), devnet: currentDevnet, adaptEnv: (env) => env };
}

function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let tail = '';
    const keep = (chunk: Buffer) => (tail = (tail + chunk.toString('utf8')).slice(-4_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} in ${cwd} exited ${code}:\n${tail}`))));
  });
}

export interface BaselineTree {
  tree: CodeTree;
  /** seconds spent checking out and building it (0 when a kept build was reused) */
  buildSeconds: number;
  /** removes the worktree (unless BENCH_BASELINE_KEEP is set) */
  remove(): Promise<void>;
}

/**
 * Checks `commit` out in a temporary worktree (`git worktree add --detach`), installs its dependencies
 * (`npm ci`, `npm install` where the lockfile lacks this platform's packages) and builds it (`npm run
 * build`). BENCH_BASELINE_DIR places the worktree (default: the OS temp directory); with BENCH_BASELINE_KEEP=1
 * it stays after the run and a later run reuses its build.
 */
export async function prepareBaselineTree(commit: string): Promise<BaselineTree> {
  const full = git(['rev-parse', '--verify', `${commit}^{commit}`]);
  const short = full.slice(0, 7);
  const dir = path.resolve(process.env.BENCH_BASELINE_DIR ?? path.join(os.tmpdir(), `facilitator-bench-baseline-${short}`));
  const keep = Boolean(process.env.BENCH_BASELINE_KEEP);
  const marker = path.join(dir, '.bench-baseline-built');
  const started = Date.now();
  let built = existsSync(marker) && existsSync(path.join(dir, 'apps/api/dist/main.js'));
  if (built && git(['rev-parse', 'HEAD'], dir) !== full) throw new Error(`${dir} holds another commit than ${short}; remove it or set BENCH_BASELINE_DIR`);
  if (!built) {
    if (existsSync(dir)) {
      log(`baseline: removing an unfinished worktree at ${dir}`);
      await removeWorktree(dir);
    }
    log(`baseline: checking out ${short} in ${dir} and building it (npm ci, npm run build)`);
    git(['worktree', 'add', '--detach', dir, full]);
    try {
      await run('npm', ['ci', '--no-audit', '--no-fund'], dir);
    } catch (err) {
      log(`baseline: npm ci failed (${(err as Error).message.split('\n')[0]}); trying npm install`);
      await run('npm', ['install', '--no-audit', '--no-fund'], dir);
    }
    await run('npm', ['run', 'build'], dir);
    writeFileSync(marker, `${full}\n`);
    built = true;
  } else log(`baseline: reusing the build of ${short} at ${dir}`);
  const buildSeconds = Math.round((Date.now() - started) / 1000);
  // the tree's own devnet: the settlement executor and USDC set-up that build expects (`packages/devnet` in a
  // tree older than the packages named by family)
  const devnetPackage = existsSync(path.join(dir, 'packages/evm-devnet')) ? 'packages/evm-devnet' : 'packages/devnet';
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const devnet = require(path.join(dir, devnetPackage, 'dist/index.js')) as DevnetModule;
  return {
    tree: {
      label: short,
      commit: short,
      root: dir,
      apiMain: path.join(dir, 'apps/api/dist/main.js'),
      workerMain: path.join(dir, 'apps/worker/dist/main.js'),
      migrationsDir: path.join(dir, 'prisma/migrations'),
      devnet,
      adaptEnv: olderEnv(dir),
    },
    buildSeconds,
    async remove() {
      if (keep) return;
      await removeWorktree(dir);
    },
  };
}

/**
 * The stack's environment for an older build. Before rate limits were on by default (no
 * MERCHANT_RATE_LIMIT_MAX in its configuration) a build had them off unless RATE_LIMIT_MAX was set, and took
 * at most 1,000,000: the raised limits the benchmark sets for this build are left out, so that build runs
 * as it shipped, without a limit.
 */
function olderEnv(dir: string): (env: Record<string, string>) => Record<string, string> {
  let config = '';
  try {
    config = readFileSync(path.join(dir, 'packages/config/dist/config.js'), 'utf8');
  } catch {
    // another layout: pass the environment on unchanged
  }
  const limitsOffByDefault = config !== '' && !config.includes('MERCHANT_RATE_LIMIT_MAX');
  return (env) => {
    if (!limitsOffByDefault) return env;
    const { RATE_LIMIT_MAX: _limit, MERCHANT_RATE_LIMIT_MAX: _merchantLimit, ...rest } = env;
    return rest;
  };
}

async function removeWorktree(dir: string): Promise<void> {
  try {
    git(['worktree', 'remove', '--force', dir]);
  } catch {
    // not registered (a half-made directory): remove the files, then forget the registration
    await run('rm', ['-rf', dir], os.tmpdir());
    git(['worktree', 'prune']);
  }
}
