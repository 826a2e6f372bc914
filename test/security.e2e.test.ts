// Security checks: body limits, API keys, no secrets in logs, and per-client rate limiting that holds
// across API processes.
import { abuseReport } from './abuse/abuse-report';
import { PassThrough } from 'node:stream';
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { createLogger, createSilentLogger } from '@facilitator/logging';
import { buildApi } from '../apps/api/src/build-api';
import { PRICE_UNITS, startTestStack, TestStack, WEBHOOK_SECRET } from './support/test-stack';
import { x402V2Request } from './support/x402-request';
import { describeWithRedis } from './support/test-services';
import { WebhookReceiver } from './support/webhook-receiver';

let stack: TestStack;
let loggedApi: ReturnType<typeof buildApi>;
let http: ReturnType<typeof supertest>;
let receiver: WebhookReceiver;
const apiLog: string[] = [];

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  const stream = new PassThrough();
  stream.on('data', (chunk: Buffer) => apiLog.push(chunk.toString()));
  // the API logs at the most verbose level, with the same secret list main.ts gives it
  stack = await startTestStack({ env: { LOG_LEVEL: 'silly', API_KEYS: 'status-key-1' } });
  const config = stack.config;
  const logger = createLogger({
    service: 'api',
    level: 'silly',
    stream,
    secrets: [config.treasury!.privateKey, ...config.relayers.map((r) => r.privateKey), config.webhookSecret, ...config.apiKeys],
  });
  loggedApi = buildApi(config, logger);
  http = supertest(loggedApi.app);
});
afterAll(async () => {
  await loggedApi?.close();
  await stack?.stop();
  await receiver?.stop();
});

it('a body over the size limit is 413 in the envelope', async () => {
  const res = await http.post('/v1/verify').set('Content-Type', 'application/json').send(`{"pad":"${'x'.repeat(80_000)}"}`);
  expect(res.status).toBe(413);
  expect(res.body.error.code).toBe('payload_too_large');
});

it('status routes without a valid API key are 401 when keys are configured', async () => {
  for (const path of ['/v1/verifications/ver_' + '0'.repeat(32), '/v1/settlements/stl_' + '0'.repeat(32), '/v1/queues', '/v1/webhooks/deliveries?verification_id=x']) {
    expect((await http.get(path)).status).toBe(401);
    expect((await http.get(path).set('X-API-Key', 'wrong')).status).toBe(401);
  }
});

it('secrets never appear in the logs of a full run (API at silly level, worker)', async () => {
  const worker = await stack.startWorker({ LOG_LEVEL: 'silly' });
  const p = await stack.payment();
  const url = receiver.endpoint('logs');
  const v = await http.post('/v1/verify').send(p.formB({ webhook_url: url }));
  await http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  await receiver.waitFor('logs', 2);
  // a failing path too: errors are where secrets tend to leak
  await http.post('/v1/verify').send((await stack.payment({ value: 1n })).formA());
  await http.get('/v1/queues').set('X-API-Key', 'status-key-1');

  const everything = apiLog.join('') + worker.lines.join('\n');
  expect(everything.length).toBeGreaterThan(1000);
  const secrets = [
    stack.config.treasury!.privateKey,
    ...stack.config.relayers.map((r) => r.privateKey),
    WEBHOOK_SECRET,
    'status-key-1',
  ];
  for (const secret of secrets) {
    expect(everything).not.toContain(secret.replace(/^0x/, ''));
  }
}, 30_000);

describe('rate limits are on by default (issue 40, 7d)', () => {
  /** the stack's environment with the test stacks' raised limits taken out: the defaults an operator gets */
  const defaults = () => {
    const { RATE_LIMIT_MAX: _paid, MERCHANT_RATE_LIMIT_MAX: _merchant, API_KEYS: _keys, ...env } = stack.env;
    // buckets of its own in Redis (they are named by the prefix): the stack's API counts the same client too
    return { ...env, QUEUE_PREFIX: `${env.QUEUE_PREFIX}d` };
  };

  it('the defaults: 3000 paid-path and 60 merchant requests per client a minute', () => {
    const config = loadConfig(defaults());
    expect(config.rateLimit).toEqual({ max: 3000, windowMs: 60_000 });
    expect(config.merchantRateLimit).toEqual({ max: 60, windowMs: 60_000 });
  });

  it('a stranger over the default limit: 429 in the spec envelope on /v1, in the x402 shape on /x402, nothing stored', async () => {
    const api = buildApi(loadConfig(defaults()), createSilentLogger());
    const server = api.app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const stranger = supertest(server);
      // the default limit, spent on refusals that store nothing (an empty body is a 400)
      for (let sent = 0; sent < 3000; sent += 100) {
        await Promise.all(Array.from({ length: 100 }, () => stranger.post('/v1/verify').send({}).expect(400)));
      }
      const p = await stack.payment();
      const verificationsBefore = await stack.db.prisma.verification.count();
      const v1 = await stranger.post('/v1/verify').send(p.formB());
      expect(v1.status).toBe(429);
      expect(v1.body.error.code).toBe('rate_limited');
      expect(Number(v1.headers['retry-after'])).toBeGreaterThan(0);
      const x402 = x402V2Request(p.authorization, p.signature, { payTo: stack.devnet.accounts.merchant.address, amount: PRICE_UNITS, asset: stack.devnet.token });
      const verify = await stranger.post('/x402/verify').send(x402);
      expect(verify.status).toBe(429);
      expect(verify.body).toMatchObject({ isValid: false, invalidReason: 'rate_limited' });
      const settle = await stranger.post('/x402/settle').send(x402);
      expect(settle.status).toBe(429);
      expect(settle.body).toMatchObject({ success: false, errorReason: 'rate_limited', transaction: '' });
      expect((await stranger.get('/v1/settlements/lookup?network=eip155:84532&payment_id=x')).status).toBe(429);
      expect(await stack.db.prisma.verification.count()).toBe(verificationsBefore);

      // the merchant routes have their own bucket: sign-in attempts, account reads and the CSV export
      const merchant = '0x' + 'ab'.repeat(20);
      const merchantPaths = [`/v1/merchants/${merchant}/account`, `/v1/merchants/${merchant}/settlements.csv`];
      for (let i = 0; i < 60; i++) expect((await stranger.get(merchantPaths[i % 2])).status).toBe(401);
      const signIn = await stranger.post(`/v1/merchants/${merchant}/session`).send({});
      expect(signIn.status).toBe(429);
      expect(signIn.body.error.code).toBe('rate_limited');
      const merchantRows = await stack.db.prisma.merchant.count({ where: { address: merchant } });
      expect(merchantRows).toBe(0);
      const report = abuseReport(
        'limits-1-default-rate-limits',
        'A stranger over the default rate limits (issue 40, 7d)',
        'one client sends 3,000 refused verifies (the default RATE_LIMIT_MAX a minute), then a valid /v1 verify, /x402 verify and settle and a lookup; then 60 merchant-route reads (MERCHANT_RATE_LIMIT_MAX) and a sign-in; the API with no limit configured',
      );
      const checks = [
        report.check('/v1/verify past the limit', '429 rate_limited', `${v1.status} ${v1.body.error?.code}`),
        report.check('/x402/verify past the limit (x402 shape)', '429 rate_limited', `${verify.status} ${verify.body.invalidReason}`),
        report.check('/x402/settle past the limit (x402 shape)', '429 rate_limited', `${settle.status} ${settle.body.errorReason}`),
        report.check('verifications stored past the limit', 0, (await stack.db.prisma.verification.count()) - verificationsBefore),
        report.check('merchant sign-in past the merchant limit', '429 rate_limited', `${signIn.status} ${signIn.body.error?.code}`),
        report.check("merchant rows stored for the stranger's address", 0, merchantRows),
      ];
      report.save();
      expect(checks.every(Boolean)).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await api.close();
    }
  }, 60_000);
});

// the limit is counted in Redis, so that every API process shares it
describeWithRedis('rate limiting', () => {
  it('when configured, limits each client across API processes with 429 and Retry-After', async () => {
    const env = { ...stack.env, QUEUE_PREFIX: `${stack.env.QUEUE_PREFIX}c`, QUEUE_BACKEND: 'redis', RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000' };
    const [one, two] = [buildApi(loadConfig(env), createSilentLogger()), buildApi(loadConfig(env), createSilentLogger())];
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await supertest(one.app).post('/v1/verify').send({})).status);
      for (let i = 0; i < 2; i++) statuses.push((await supertest(two.app).post('/v1/settle').send({})).status);
      expect(statuses).toEqual([400, 400, 400, 400, 400]);
      const limited = await supertest(two.app).post('/v1/verify').send({});
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe('rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
      // status queries are not limited
      expect((await supertest(one.app).get('/healthz')).status).toBe(200);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
