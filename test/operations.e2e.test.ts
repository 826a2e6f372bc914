import { abuseReport } from './abuse/abuse-report';
import { openQueueStore, queueStoreTargetOf } from '@facilitator/queue';
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi } from '../apps/api/src/build-api';
import { startTestStack, TestStack } from './support/test-stack';
import { freePort } from './support/ports';
import { startApiProcess } from './support/api-process';
import { requestOnFreshConnection } from './support/fresh-connection';
import { duplicateFamilies, duplicateSamples, parseSamples, valueOf } from './support/prometheus-text';
import { dashboardQueries, unansweredQueries } from './support/dashboard-queries';
import { WebhookReceiver } from './support/webhook-receiver';
import { setTimeout as sleep } from 'node:timers/promises';

const ADMIN = { ADMIN_USERNAME: 'operator', ADMIN_PASSWORD: 'correct horse battery' };
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: ADMIN });
});
afterAll(async () => {
  await stack?.stop();
});

async function settleOne(): Promise<string> {
  const p = await stack.payment();
  const v = await stack.http.post('/v1/verify').send(p.formB());
  const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  for (let i = 0; i < 100; i++) {
    const status = await stack.http.get(`/v1/settlements/${s.body.settlement_id}`);
    if (status.body.status === 'settled') return s.body.settlement_id;
    await sleep(50);
  }
  throw new Error('not settled');
}

describe('metrics', () => {
  it('the API and the worker expose the named series, and they move when a settlement runs', async () => {
    const metricsPort = await freePort();
    await stack.startWorker({ WORKER_METRICS_PORT: String(metricsPort) });
    const scrapeWorker = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const scrapeApi = async () => (await stack.http.get('/metrics')).text;

    const apiBefore = await scrapeApi();
    const workerBefore = await scrapeWorker();
    await settleOne();
    const apiAfter = await scrapeApi();
    const workerAfter = await scrapeWorker();

    expect(valueOf(apiAfter, 'x402_verifications_total', { result: 'verified' })).toBe(valueOf(apiBefore, 'x402_verifications_total', { result: 'verified' }) + 1);
    expect(valueOf(apiAfter, 'x402_http_requests_total', { route: '/v1/verify', status: '200' })).toBeGreaterThan(0);
    expect(apiAfter).toContain('x402_http_request_duration_seconds_bucket');
    expect(apiAfter).toMatch(/x402_queue_jobs\{[^}]*queue="settlement"/);

    expect(valueOf(workerAfter, 'x402_settlements_total', { state: 'settled' })).toBe(valueOf(workerBefore, 'x402_settlements_total', { state: 'settled' }) + 1);
    expect(valueOf(workerAfter, 'x402_fees_collected_total')).toBe(valueOf(workerBefore, 'x402_fees_collected_total') + 1);
    expect(valueOf(workerAfter, 'x402_fee_units_collected_total')).toBe(valueOf(workerBefore, 'x402_fee_units_collected_total') + 10_000);
    expect(valueOf(workerAfter, 'x402_settlement_duration_seconds_count')).toBe(valueOf(workerBefore, 'x402_settlement_duration_seconds_count') + 1);
    const treasury = stack.devnet.accounts.treasury.address.toLowerCase();
    expect(valueOf(workerAfter, 'x402_relayer_native_balance_wei', { address: treasury, role: 'treasury' })).toBeGreaterThan(0);
    expect(workerAfter).toMatch(/x402_relayer_token_balance_units\{[^}]*role="relayer"/);
    expect(workerAfter).toMatch(/x402_webhook_attempts_total|x402_queue_jobs/);
  });
});

describe('metrics with two API processes (a Node cluster)', () => {
  it('every scrape, whichever process answers, reports the whole API, and every series moves', async () => {
    const receiver = await new WebhookReceiver().start();
    const metricsPort = await freePort();
    // one worker only, so its counters see every settlement of this test
    await stack.killWorkers();
    const worker = await stack.startWorker({ WORKER_METRICS_PORT: String(metricsPort) });
    const api = await startApiProcess({ ...stack.env, API_PROCESSES: '2', LOG_LEVEL: 'warn' });
    const scrapeWorker = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    // each scrape on its own connection, so the cluster hands them to both processes in turn
    const scrapeApi = async () => {
      const res = await requestOnFreshConnection('GET', `${api.url}/metrics`);
      expect({ status: res.status, body: res.status === 200 ? 'metrics' : res.text }).toEqual({ status: 200, body: 'metrics' });
      return res.text;
    };
    try {
      const apiBefore = await scrapeApi();
      const workerBefore = await scrapeWorker();
      const payments = 6;
      const settled: string[] = [];
      for (let i = 0; i < payments; i++) {
        const p = await stack.payment();
        const verified = await requestOnFreshConnection('POST', `${api.url}/v1/verify`, p.formB({ webhook_url: receiver.endpoint(`m${i}`) }));
        expect(verified.status).toBe(200);
        const settle = await requestOnFreshConnection('POST', `${api.url}/v1/settle`, {
          verification_id: verified.json<{ verification_id: string }>().verification_id,
          destination_address: stack.devnet.accounts.merchant.address,
        });
        expect(settle.status).toBeLessThan(300);
        settled.push(settle.json<{ settlement_id: string }>().settlement_id);
      }
      for (const id of settled) {
        for (let tries = 0; ; tries++) {
          const status = await requestOnFreshConnection('GET', `${api.url}/v1/settlements/${id}`);
          if (status.json<{ status: string }>().status === 'settled') break;
          if (tries > 200) throw new Error(`${id} not settled: ${status.text}`);
          await sleep(50);
        }
      }
      // verification.completed and settlement.completed for each payment; a job completes just after its delivery
      for (let i = 0; i < payments; i++) await receiver.waitFor(`m${i}`, 2);
      const webhooksCompleted = async () => valueOf(await scrapeApi(), 'x402_queue_jobs', { queue: 'webhook', state: 'completed' });
      for (const deadline = Date.now() + 10_000; (await webhooksCompleted()) < 2 * payments && Date.now() < deadline; ) {
        await sleep(200);
      }

      const verifiedBefore = valueOf(apiBefore, 'x402_verifications_total', { result: 'verified' });
      const completedBefore = valueOf(apiBefore, 'x402_queue_jobs', { queue: 'settlement', state: 'completed' });
      for (let scrape = 0; scrape < 4; scrape++) {
        const apiAfter = await scrapeApi();
        expect(duplicateSamples(apiAfter)).toEqual([]);
        expect(duplicateFamilies(apiAfter)).toEqual([]);
        // counters summed over both processes: every scrape sees all the requests, not one process's share
        expect(valueOf(apiAfter, 'x402_verifications_total', { result: 'verified', reason: 'none' }) - verifiedBefore).toBe(payments);
        expect(valueOf(apiAfter, 'x402_http_requests_total', { method: 'POST', route: '/v1/verify', status: '200' })).toBe(payments);
        expect(valueOf(apiAfter, 'x402_http_request_duration_seconds_count', { method: 'POST', route: '/v1/verify', status: '200' })).toBe(payments);
        expect(valueOf(apiAfter, 'x402_http_requests_total', { method: 'POST', route: '/v1/settle' })).toBe(payments);
        expect(valueOf(apiAfter, 'x402_queue_jobs', { queue: 'settlement', state: 'completed' }) - completedBefore).toBeGreaterThanOrEqual(payments);
        expect(valueOf(apiAfter, 'x402_queue_jobs', { queue: 'webhook', state: 'completed' })).toBeGreaterThanOrEqual(2 * payments);
        expect(valueOf(apiAfter, 'x402_process_cpu_seconds_total')).toBeGreaterThan(0);
        expect(valueOf(apiAfter, 'x402_process_resident_memory_bytes')).toBeGreaterThan(0);
        expect(apiAfter).not.toContain('x402_process_process_');
      }

      // key balances are read at most every 15 s: wait for a reading taken after the fees arrived
      const treasury = stack.devnet.accounts.treasury.address.toLowerCase();
      const treasuryTokens = (text: string) => valueOf(text, 'x402_relayer_token_balance_units', { address: treasury, role: 'treasury' });
      let workerAfter = await scrapeWorker();
      for (const deadline = Date.now() + 20_000; treasuryTokens(workerAfter) === treasuryTokens(workerBefore) && Date.now() < deadline; ) {
        await sleep(500);
        workerAfter = await scrapeWorker();
      }
      expect(duplicateSamples(workerAfter)).toEqual([]);
      const moved = (name: string, labels: Record<string, string> = {}) => valueOf(workerAfter, name, labels) - valueOf(workerBefore, name, labels);
      expect(moved('x402_settlements_total', { state: 'settled' })).toBe(payments);
      expect(moved('x402_settlement_duration_seconds_count')).toBe(payments);
      expect(moved('x402_fees_collected_total')).toBe(payments);
      expect(moved('x402_fee_units_collected_total')).toBe(payments * 10_000);
      expect(moved('x402_webhook_attempts_total', { outcome: 'delivered' })).toBe(2 * payments);
      expect(moved('x402_relayer_token_balance_units', { address: treasury, role: 'treasury' })).toBe(payments * 10_000);
      expect(valueOf(workerAfter, 'x402_relayer_native_balance_wei', { role: 'relayer' })).toBeGreaterThan(0);
    } finally {
      await api.stop();
      await worker.stop('SIGTERM');
      await receiver.stop();
    }
  });
});

describe('the Grafana dashboard (docs/grafana-dashboard.json)', () => {
  it('asks only for series, labels and label values that the running API and worker export', async () => {
    const receiver = await new WebhookReceiver().start();
    const metricsPort = await freePort();
    await stack.killWorkers();
    const worker = await stack.startWorker({ WORKER_METRICS_PORT: String(metricsPort) });
    try {
      // a settled payment with webhooks, and a rejected verification: every panel has data to show
      const paid = await stack.payment();
      const verified = await stack.http.post('/v1/verify').send(paid.formB({ webhook_url: receiver.endpoint('dashboard') }));
      await stack.http.post('/v1/settle').send({ verification_id: verified.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
      const stranger = await stack.payment({ to: stack.devnet.accounts.payer.address });
      await stack.http.post('/v1/verify').send(stranger.formB());
      await receiver.waitFor('dashboard', 2);
      const scrapes = [(await stack.http.get('/metrics')).text, await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()];
      const samples = scrapes.flatMap(parseSamples);

      const queries = dashboardQueries();
      expect(queries.length).toBeGreaterThanOrEqual(10);
      expect(unansweredQueries(queries, samples)).toEqual([]);
      // and the check itself notices a series we do not export, a label value we never write, a missing label
      const broken = [
        { panel: 'typo', expr: '', selectors: [{ metric: 'x402_verification_total', matchers: [] }], groupedBy: [] },
        { panel: 'value', expr: '', selectors: [{ metric: 'x402_verifications_total', matchers: [{ label: 'result', op: '=' as const, value: 'maybe' }] }], groupedBy: [] },
        { panel: 'label', expr: '', selectors: [{ metric: 'x402_fee_units_collected_total', matchers: [] }], groupedBy: ['merchant'] },
      ];
      expect(unansweredQueries(broken, samples)).toHaveLength(3);
    } finally {
      await worker.stop('SIGTERM');
      await receiver.stop();
    }
  });
});

describe('GET /admin/queues', () => {
  it('is 401 without credentials and 200 with them', async () => {
    const anonymous = await stack.http.get('/admin/queues');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toContain('Basic');
    expect((await stack.http.get('/admin/queues').auth('operator', 'wrong password!')).status).toBe(401);
    const ok = await stack.http.get('/admin/queues').auth(ADMIN.ADMIN_USERNAME, ADMIN.ADMIN_PASSWORD);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('<html');
    const api = await stack.http.get('/admin/queues/api/queues').auth(ADMIN.ADMIN_USERNAME, ADMIN.ADMIN_PASSWORD);
    expect(api.status).toBe(200);
    // every queue the service runs, the maintenance jobs' included
    expect(api.body.queues.map((q: { name: string }) => q.name).sort()).toEqual(['maintenance', 'settlement', 'webhook']);
  });

  it('is off, and says so, when no credentials are configured', async () => {
    const { ADMIN_USERNAME: _u, ADMIN_PASSWORD: _p, ...env } = stack.env;
    const plain = buildApi(loadConfig(env), createSilentLogger());
    try {
      const res = await supertest(plain.app).get('/admin/queues');
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe('the queue dashboard is off: set ADMIN_USERNAME and ADMIN_PASSWORD to turn it on');
    } finally {
      await plain.close();
    }
  });
});

/** The URLs of the scripts, stylesheets and icons a page links, resolved against the page's own URL. */
function linkedAssets(html: string, pageUrl: string): string[] {
  const refs = [...html.matchAll(/<(?:script|link)\b[^>]*?(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  return refs.map((ref) => new URL(ref, pageUrl).toString());
}

describe('pages served by us alone', () => {
  it('/docs sends the browser to /docs/, whose every asset we serve', async () => {
    const redirect = await stack.http.get('/docs?tag=verify');
    expect(redirect.status).toBe(302);
    expect(new URL(redirect.headers.location, 'http://api.test/docs?tag=verify').toString()).toBe('http://api.test/docs/?tag=verify');
    const page = await stack.http.get('/docs/');
    expect(page.status).toBe(200);
    const assets = linkedAssets(page.text, 'http://api.test/docs/');
    expect(assets).toEqual(expect.arrayContaining(['http://api.test/docs/swagger-ui.css', 'http://api.test/docs/swagger-ui-bundle.js', 'http://api.test/docs/swagger-ui-init.js']));
    for (const asset of assets) {
      expect(new URL(asset).host).toBe('api.test');
      expect({ asset, status: (await stack.http.get(new URL(asset).pathname)).status }).toEqual({ asset, status: 200 });
    }
  });

  it('the queue dashboard links nothing outside the machine, and serves what it links', async () => {
    const page = await stack.http.get('/admin/queues').auth(ADMIN.ADMIN_USERNAME, ADMIN.ADMIN_PASSWORD);
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/(?:src|href)="https?:/);
    const base = /<base href="([^"]+)"/.exec(page.text)?.[1] ?? '/admin/queues/';
    const assets = linkedAssets(page.text, new URL(base, 'http://api.test/admin/queues').toString());
    expect(assets.length).toBeGreaterThanOrEqual(4);
    for (const asset of assets) {
      expect(new URL(asset).host).toBe('api.test');
      const res = await stack.http.get(new URL(asset).pathname).auth(ADMIN.ADMIN_USERNAME, ADMIN.ADMIN_PASSWORD);
      expect({ asset, status: res.status }).toEqual({ asset, status: 200 });
    }
  });
});

describe('GET /v1/queues', () => {
  it('is an operator route: refused without API_KEYS configured, and without the key when they are (issue 40, 7c)', async () => {
    // a parked settlement whose reason is internal error text: what the open route listed to anyone
    const p = await stack.payment();
    const v = await stack.http.post('/v1/verify').send(p.formB());
    const parked = (await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address })).body.settlement_id as string;
    await stack.db.pool.query("UPDATE settlements SET attention_at = now(), attention_reason = 'internal: relayer 0xabc nonce gap at db host 10.0.0.7' WHERE id = $1", [parked]);
    try {
      const open = await stack.http.get('/v1/queues');
      expect(open.status).toBe(401);
      expect(open.body.error.message).toBe('operator routes need API_KEYS to be configured');
      expect(JSON.stringify(open.body)).not.toContain(parked);
      const keyed = buildApi(loadConfig({ ...stack.env, API_KEYS: 'operator-key-1' }), createSilentLogger());
      try {
        const unkeyed = await supertest(keyed.app).get('/v1/queues');
        const res = await supertest(keyed.app).get('/v1/queues').set('x-api-key', 'operator-key-1');
        expect(res.status).toBe(200);
        expect(res.body.settlements_needing_attention.oldest.map((s: { id: string }) => s.id)).toContain(parked);
        const report = abuseReport(
          'limits-2-queue-view-is-an-operator-route',
          'The queue view and its parked settlements are for operators only (issue 40, 7c)',
          'a stranger asks GET /v1/queues while a settlement is parked with internal error text: once with API_KEYS unset, once with keys configured but none sent',
        );
        const checks = [
          report.check('API_KEYS unset: status', 401, open.status),
          report.check('API_KEYS unset: the parked settlement in the answer', false, JSON.stringify(open.body).includes(parked)),
          report.check('keys configured, none sent: status', 401, unkeyed.status),
          report.check('with an operator key: the parked settlement listed', true, JSON.stringify(res.body).includes(parked)),
        ];
        report.save();
        expect(checks.every(Boolean)).toBe(true);
      } finally {
        await keyed.close();
      }
    } finally {
      await stack.db.pool.query('UPDATE settlements SET attention_at = NULL, attention_reason = NULL WHERE id = $1', [parked]);
    }
  });

  it('reports the counts the queues hold, and the oldest waiting job age', async () => {
    // the stack's own datastore (Redis, or BullMQ's PostgreSQL backend under npm run test:postgres-queues)
    const store = openQueueStore(queueStoreTargetOf(stack.config, 2));
    const { settlement } = store.openQueues();
    try {
      // a job no worker takes (paused workers are not involved: this queue name is served, so pause it)
      await settlement.pause();
      await settlement.add('settle', { settlementId: 'stl_' + 'f'.repeat(32) }, { jobId: 'stl_' + 'f'.repeat(32) });
      await sleep(1100);
      const keyed = buildApi(loadConfig({ ...stack.env, API_KEYS: 'operator-key-1' }), createSilentLogger());
      const res = await supertest(keyed.app).get('/v1/queues').set('x-api-key', 'operator-key-1');
      await keyed.close();
      expect(res.status).toBe(200);
      const direct = await settlement.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized');
      const reported = res.body.queues.find((q: { name: string }) => q.name === 'settlement');
      expect(reported.counts).toEqual(direct);
      expect(reported.oldest_waiting_age_seconds).toBeGreaterThanOrEqual(1);
      expect(res.body.queues.map((q: { name: string }) => q.name)).toEqual(['settlement', 'webhook', 'maintenance']);
    } finally {
      await settlement.obliterate({ force: true });
      await settlement.resume();
      await settlement.close();
      await store.close();
    }
  });
});
