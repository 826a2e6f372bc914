// GET /status.json on a real stack: public even with API_KEYS set, never rate-limited, valid against the
// schema the OpenAPI document publishes, aggregates only (no address, no id), and one computation shared by
// concurrent visitors (the same computed_at for all of them); a database it cannot reach is a 503, not a 500.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { serviceStatusSchema, type ServiceStatus } from '@facilitator/schemas';
import { buildApi } from '../apps/api/src/build-api';
import { startTestStack, type TestStack } from './support/test-stack';
import { statusUntil } from './support/status-scenario';

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ env: { API_KEYS: 'operator-key', RATE_LIMIT_MAX: '3', STATUS_MAX_AGE_MS: '1000' } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

it('reports a verify it stored, with its latency, to anyone and in the published shape', async () => {
  const verify = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
  expect(verify.status).toBe(200);
  const status = await statusUntil(stack, (s) => s.networks[0].verify['5m'].count === 1);
  const validate = addFormats(new Ajv({ strict: false })).compile(serviceStatusSchema);
  expect(validate(status)).toBe(true);

  const [network] = status.networks;
  expect(network).toMatchObject({ network: 'eip155:84532', name: 'Base Sepolia', chain_id: 84532 });
  const row = await stack.db.prisma.verification.findUniqueOrThrow({ where: { id: verify.body.verification_id } });
  expect(row.verifyMs).not.toBeNull();
  expect(network.verify['5m']).toEqual({ count: 1, p50_ms: row.verifyMs, p95_ms: row.verifyMs });
  expect(network.settle['24h']).toEqual({ settled: 0, failed: 0, success_rate: null, p50_ms: null, p95_ms: null });
  expect(network.rpc).toMatchObject({ up: 1, total: 1, endpoints: [{ endpoint: '1', up: true }] });
  expect(network.fee).toMatchObject({ facilitator_fee_units: stack.config.feeAmount.toString(), gas_above_cap: false });
  expect(BigInt(network.fee.base_fee_per_gas_wei!)).toBe((await stack.devnet.provider.getBlock('latest'))!.baseFeePerGas);

  // aggregates only: no payer, merchant, token or treasury address, no record id, no RPC URL
  const text = JSON.stringify(status);
  expect(text).not.toMatch(/0x[0-9a-fA-F]{40}/);
  expect(text).not.toMatch(/\b(ver|stl)_/);
  expect(text).not.toContain(stack.devnet.rpcUrl);
});

it('serves many concurrent visitors one computation, beyond the rate limit of the paid endpoints', async () => {
  // an API whose computation lives a minute: 40 visitors arriving over more than a second on a loaded
  // machine still share one (with the stack's 1 s they sometimes straddled two computations, seen in CI)
  const patient = buildApi(loadConfig({ ...stack.env, STATUS_MAX_AGE_MS: '60000' }), createSilentLogger());
  try {
    const answers = await Promise.all(Array.from({ length: 40 }, () => supertest(patient.app).get('/status.json')));
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    expect(new Set(answers.map((a) => (a.body as ServiceStatus).computed_at)).size).toBe(1);
    expect(answers[0].headers['cache-control']).toBe('public, max-age=60');
  } finally {
    await patient.close();
  }
  // the limiter is on (RATE_LIMIT_MAX=3): the paid endpoints are limited, the status is not
  const limited = await Promise.all(Array.from({ length: 5 }, async () => (await stack.http.post('/v1/verify').send({})).status));
  expect(limited).toContain(429);
});

it('serves the page with a policy that lets it load nothing from elsewhere', async () => {
  const page = await stack.http.get('/status');
  expect(page.status).toBe(200);
  expect(page.headers['content-type']).toMatch(/^text\/html/);
  expect(page.headers['content-security-policy']).toMatch(/default-src 'none'.*connect-src 'self'/);
  expect(page.text).not.toMatch(/(src|href)="(https?:)?\/\//);
});

it('answers 503 in the error envelope, not a stack trace, when the database cannot be reached', async () => {
  const down = buildApi(loadConfig({ ...stack.env, DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/none' }), createSilentLogger());
  try {
    const res = await supertest(down.app).get('/status.json');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: { code: 'service_unavailable', message: expect.any(String), details: { dependency: 'database' } } });
  } finally {
    await down.close();
  }
});
