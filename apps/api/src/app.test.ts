import request from 'supertest';
import { createSilentLogger } from '@facilitator/logging';
import { createMetrics } from '@facilitator/metrics';
import { RateLimitedError, ServiceUnavailableError } from '@facilitator/core';
import { Registry } from 'prom-client';
import { apiRouter } from './api-router';
import { createApp } from './app';
import { jsonObjectBody } from './request-body';

// The HTTP shell alone (no services): every refusal made before or around a route answers in the shape of
// the API it hit: the spec's envelope on /v1, x402's verify and settle responses on /x402 (issue 44).
function shell() {
  const router = apiRouter();
  const echo = (_req: unknown, res: { json(b: unknown): void }) => res.json({ ok: true });
  router.post('/v1/verify', jsonObjectBody(), echo);
  router.post('/x402/verify', echo);
  router.post('/x402/settle', echo);
  router.get('/x402/supported', echo);
  router.get('/v1/settlements/:id', echo);
  router.post('/v1/settlements/:id/retry', echo);
  router.post('/x402/busy', () => {
    throw new RateLimitedError(7);
  });
  router.post('/x402/down', () => {
    throw new ServiceUnavailableError('the database is unavailable', { dependency: 'database' });
  });
  router.post('/v1/boom', () => {
    throw new Error('a secret stack');
  });
  return createApp({ logger: createSilentLogger(), metrics: createMetrics('api', {}, new Registry()), maxBodyBytes: 1000, readinessChecks: [], routers: [router] });
}

const app = shell();
const postJson = (path: string, text: string) => request(app).post(path).set('Content-Type', 'application/json').send(text);

describe('refusals in the shape of the API they hit', () => {
  it.each([
    ['malformed JSON', '{"x402Version": ', 400, 'invalid_payload', 'request body is not valid JSON'],
    ['a body over the limit', JSON.stringify({ a: 'x'.repeat(2000) }), 413, 'payload_too_large', 'request body is larger than 1000 bytes'],
  ])('/x402/verify and /x402/settle: %s', async (_name, text, status, reason, message) => {
    const verify = await postJson('/x402/verify', text);
    expect(verify.status).toBe(status);
    expect(verify.body).toEqual({ isValid: false, invalidReason: reason, invalidMessage: message });
    const settle = await postJson('/x402/settle', text);
    expect(settle.status).toBe(status);
    expect(settle.body).toEqual({ success: false, errorReason: reason, errorMessage: message, transaction: '', network: '' });
  });

  it('/x402: a body in an unsupported encoding', async () => {
    const res = await request(app).post('/x402/settle').set('Content-Type', 'application/json; charset=latin1').send('{}');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, errorReason: 'invalid_payload', errorMessage: expect.stringContaining('UTF-8') });
  });

  it('/v1: the same refusals in the envelope', async () => {
    const res = await postJson('/v1/verify', '{"payment": ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'invalid_request', message: 'request body is not valid JSON' } });
  });

  it.each([
    ['null', 'null'],
    ['a string', '"hello"'],
    ['a number', '42'],
    ['a boolean', 'true'],
  ])('JSON that is %s is told it must be an object, not that it is not JSON', async (kind, text) => {
    const v1 = await postJson('/v1/verify', text);
    expect(v1.status).toBe(400);
    expect(v1.body.error.message).toBe(`request body must be a JSON object, not ${kind}`);
    const x402 = await postJson('/x402/verify', text);
    expect(x402.body).toMatchObject({ isValid: false, invalidReason: 'invalid_payload', invalidMessage: `request body must be a JSON object, not ${kind}` });
  });

  it('a limiter or an unavailable dependency on /x402 keeps the x402 shape and its Retry-After', async () => {
    const busy = await postJson('/x402/busy', '{}');
    expect(busy.status).toBe(429);
    expect(busy.headers['retry-after']).toBe('7');
    expect(busy.body).toEqual({ errorReason: 'rate_limited', errorMessage: 'too many requests; retry after 7 s' });
    const down = await postJson('/x402/down', '{}');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ errorReason: 'service_unavailable', errorMessage: 'the database is unavailable' });
  });

  it('a failure of ours is a bare 500 in the envelope, never the error itself', async () => {
    const res = await postJson('/v1/boom', '{}');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'internal_error', message: 'internal error' } });
    expect(res.text).not.toContain('secret');
  });
});

describe('a wrong method', () => {
  it.each([
    ['GET', '/x402/settle', ['POST'], { errorReason: 'method_not_allowed' }],
    ['GET', '/v1/verify', ['POST'], { error: { code: 'method_not_allowed' } }],
    ['DELETE', '/v1/settlements/abc', ['GET', 'HEAD'], { error: { code: 'method_not_allowed' } }],
    ['POST', '/x402/supported', ['GET', 'HEAD'], { errorReason: 'method_not_allowed' }],
    ['GET', '/v1/settlements/abc/retry', ['POST'], { error: { code: 'method_not_allowed' } }],
  ])('%s %s is 405 with Allow: %j', async (method, path, allowed, shape) => {
    const res = await request(app)[method.toLowerCase() as 'get' | 'post' | 'delete'](path);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allowed.join(', '));
    expect(res.body).toMatchObject(shape);
  });

  it('GET /x402/settle is answered as a settle response: x402 clients read success and errorReason', async () => {
    const res = await request(app).get('/x402/settle');
    expect(res.body).toEqual({ success: false, errorReason: 'method_not_allowed', errorMessage: '/x402/settle does not answer GET; it answers POST', transaction: '', network: '' });
  });

  it.each(['/v1/verify/', '/V1/VERIFY', '/v1/nothing', '/x402/nothing'])('a path nobody serves (%s) stays a 404', async (path) => {
    const res = await request(app).get(path);
    expect(res.status).toBe(404);
    expect(res.headers.allow).toBeUndefined();
  });
});
