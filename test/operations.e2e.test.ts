import { Queue } from 'bullmq';
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi } from '../apps/api/src/build-api';
import { startTestStack, TestStack } from './support/test-stack';
import { freePort } from './support/ports';

const ADMIN = { ADMIN_USERNAME: 'operator', ADMIN_PASSWORD: 'correct horse battery' };
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: ADMIN });
});
afterAll(async () => {
  await stack?.stop();
});

/** The value of one series (with these labels) in Prometheus text, or 0 when absent. */
function valueOf(text: string, name: string, labels: Record<string, string> = {}): number {
  const lines = text.split('\n').filter((l) => l.startsWith(name) && !l.startsWith('#'));
  const match = lines.find((l) => {
    const head = l.slice(0, l.lastIndexOf(' '));
    if (!(head === name || head.startsWith(`${name}{`))) return false;
    return Object.entries(labels).every(([k, v]) => head.includes(`${k}="${v}"`));
  });
  return match ? Number(match.slice(match.lastIndexOf(' ') + 1)) : 0;
}

async function settleOne(): Promise<string> {
  const p = await stack.payment();
  const v = await stack.http.post('/v1/verify').send(p.formB());
  const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  for (let i = 0; i < 100; i++) {
    const status = await stack.http.get(`/v1/settlements/${s.body.settlement_id}`);
    if (status.body.status === 'settled') return s.body.settlement_id;
    await new Promise((r) => setTimeout(r, 50));
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
    expect(api.body.queues.map((q: { name: string }) => q.name).sort()).toEqual(['settlement', 'webhook']);
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

describe('GET /v1/queues', () => {
  it('reports the counts the queues hold, and the oldest waiting job age', async () => {
    const connection = { url: stack.env.REDIS_URL };
    const settlement = new Queue('settlement', { connection, prefix: stack.config.queuePrefix });
    try {
      // a job no worker takes (paused workers are not involved: this queue name is served, so pause it)
      await settlement.pause();
      await settlement.add('settle', { settlementId: 'stl_' + 'f'.repeat(32) }, { jobId: 'stl_' + 'f'.repeat(32) });
      await new Promise((r) => setTimeout(r, 1100));
      const res = await stack.http.get('/v1/queues');
      expect(res.status).toBe(200);
      const direct = await settlement.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized');
      const reported = res.body.queues.find((q: { name: string }) => q.name === 'settlement');
      expect(reported.counts).toEqual(direct);
      expect(reported.oldest_waiting_age_seconds).toBeGreaterThanOrEqual(1);
      expect(res.body.queues.map((q: { name: string }) => q.name)).toEqual(['settlement', 'webhook']);
    } finally {
      await settlement.obliterate({ force: true });
      await settlement.resume();
      await settlement.close();
    }
  });
});
