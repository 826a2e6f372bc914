// No Docker engine runs here, so the image is checked in two ways: the Dockerfile's shape (a build stage,
// a runtime stage with production dependencies only, a non-root user), and, more to the point, that the
// production processes really run on production dependencies: the API (two processes), the worker and the
// migration runner run through a payment with every package that `npm prune --omit=dev` removes (marked
// "dev" in package-lock.json) made unresolvable, as in the runtime image (test/support/record-loaded-modules.js).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApiProcess } from './support/api-process';
import { createEmptyDatabase } from './support/database';
import { startTestStack, type TestStack } from './support/test-stack';
import { WebhookReceiver } from './support/webhook-receiver';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.resolve(__dirname, '..');
// required inside try/catch by a production package, which works without them
const OPTIONAL_DEV_PACKAGES = ['node_modules/supports-color'];

interface Stage {
  name: string | undefined;
  from: string;
  lines: string[];
}

function dockerfileStages(): Stage[] {
  const text = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stages: Stage[] = [];
  for (const line of text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) stages.push({ from: from[1], name: from[2], lines: [] });
    else stages[stages.length - 1].lines.push(line);
  }
  return stages;
}

describe('Dockerfile', () => {
  const stages = dockerfileStages();
  const runtime = stages[stages.length - 1];

  it('builds in one stage and runs from another, based on a plain Node image', () => {
    expect(stages.find((s) => s.name === 'build')).toBeDefined();
    expect(runtime.from).toMatch(/^node:\d+/);
  });

  it('gives the runtime image production dependencies only', () => {
    const copiedFrom = runtime.lines.map((l) => /^COPY\s+--from=(\S+)/i.exec(l)?.[1]).filter(Boolean);
    expect(copiedFrom.length).toBeGreaterThan(0);
    for (const source of new Set(copiedFrom)) {
      const stage = stages.find((s) => s.name === source)!;
      expect(stage.lines.join('\n')).toMatch(/npm (prune|ci|install)\b[^\n]*--omit=dev/);
    }
    expect(runtime.lines.some((l) => /^RUN\s+npm (install|ci)\b/i.test(l) && !l.includes('--omit=dev'))).toBe(false);
  });

  it('runs as a non-root user', () => {
    const users = runtime.lines.filter((l) => /^USER\s/i.test(l)).map((l) => l.split(/\s+/)[1]);
    expect(users.length).toBeGreaterThan(0);
    expect(['root', '0', '0:0']).not.toContain(users[users.length - 1]);
  });
});

describe('the production processes on production dependencies', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  const loaded = mkdtempSync(path.join(os.tmpdir(), 'loaded-modules-'));
  const recording = { NODE_OPTIONS: `--require ${path.join(__dirname, 'support/record-loaded-modules.js')}`, LOADED_MODULES_DIR: loaded };

  beforeAll(async () => {
    [stack, receiver] = await Promise.all([
      startTestStack({ env: { ADMIN_USERNAME: 'operator', ADMIN_PASSWORD: 'correct horse battery' } }),
      new WebhookReceiver().start(),
    ]);
  });
  afterAll(async () => {
    await receiver?.stop();
    await stack?.stop();
    rmSync(loaded, { recursive: true, force: true });
  });

  it('load nothing that `npm prune --omit=dev` removes, and none of our TypeScript sources or tests', async () => {
    const empty = await createEmptyDatabase();
    try {
      execFileSync(process.execPath, [path.join(ROOT, 'packages/db/dist/migrate-cli.js')], {
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: empty.url, ...recording },
        stdio: 'pipe',
      });
    } finally {
      await empty.drop();
    }
    const worker = await stack.startWorker(recording);
    const api = await startApiProcess({ ...stack.env, API_PROCESSES: '2', ...recording });
    try {
      const p = await stack.payment();
      const post = (url: string, body: unknown) => fetch(`${api.url}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const verified = (await (await post('/v1/verify', p.formB({ webhook_url: receiver.endpoint('image') }))).json()) as { verification_id: string };
      const settle = (await (await post('/v1/settle', { verification_id: verified.verification_id, destination_address: stack.devnet.accounts.merchant.address })).json()) as { settlement_id: string };
      for (let i = 0; ; i++) {
        const status = (await (await fetch(`${api.url}/v1/settlements/${settle.settlement_id}`)).json()) as { status: string };
        if (status.status === 'settled') break;
        if (i > 200) throw new Error(`not settled: ${JSON.stringify(status)}`);
        await sleep(50);
      }
      await receiver.waitFor('image', 2);
      const auth = { authorization: `Basic ${Buffer.from('operator:correct horse battery').toString('base64')}` };
      for (const [url, headers] of [['/metrics', {}], ['/readyz', {}], ['/docs/', {}], ['/admin/queues', auth], ['/admin/queues/api/queues', auth]] as const) {
        expect({ url, status: (await fetch(`${api.url}${url}`, { headers })).status }).toEqual({ url, status: 200 });
      }
    } finally {
      await api.stop();
      await worker.stop('SIGTERM');
    }

    const records = readdirSync(loaded).map((f) => JSON.parse(readFileSync(path.join(loaded, f), 'utf8')) as { argv: string[]; loaded: string[]; refused: string[] });
    // the migration runner, the API's primary and its two processes, the worker
    expect(records.length).toBeGreaterThanOrEqual(5);
    // dev packages asked for are only optional ones, tried and done without (debug tries supports-color)
    const refused = new Set(records.flatMap((r) => r.refused));
    expect([...refused].filter((p) => !OPTIONAL_DEV_PACKAGES.includes(p))).toEqual([]);
    const ours = [...new Set(records.flatMap((r) => r.loaded))].map((f) => path.relative(ROOT, f)).filter((f) => !f.startsWith('..') && !f.includes('node_modules/'));
    expect(ours.filter((f) => !/^(packages|apps)\/[^/]+\/dist\//.test(f) && !f.startsWith('test/support/record-loaded-modules'))).toEqual([]);
    expect(records.map((r) => path.relative(ROOT, r.argv[0])).sort()).toEqual(expect.arrayContaining(['apps/api/dist/main.js', 'apps/worker/dist/main.js', 'packages/db/dist/migrate-cli.js']));
    expect(ours.length).toBeGreaterThan(50);
  });
});
