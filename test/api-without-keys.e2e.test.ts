// The internet-facing API holds no private key: it starts from TREASURY_ADDRESS and RELAYER_ADDRESSES,
// serves every route, and the worker (the only process with keys) settles. Plus the hardening items of
// the review that are about the API's answers: /readyz, idempotency scope.
import { Wallet } from 'ethers';
import supertest from 'supertest';
import { loadApiConfig } from '@facilitator/config';
import { MerchantAction } from '@facilitator/merchants';
import { merchantProof } from './support/merchant-client';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi } from '../apps/api/src/build-api';
import { startApiProcess, type ApiProcess } from './support/api-process';
import { QUEUE_READINESS_CHECK, startTestStack, type TestStack } from './support/test-stack';
import { setTimeout as sleep } from 'node:timers/promises';

let stack: TestStack;
let api: ApiProcess;

beforeAll(async () => {
  stack = await startTestStack();
  await stack.startWorker();
  const { TREASURY_PRIVATE_KEY: _t, RELAYER_PRIVATE_KEYS: _r, ...withoutKeys } = stack.env;
  api = await startApiProcess({
    ...withoutKeys,
    API_PROCESSES: '1',
    // every line the API can write, so the test below sees whatever could leak
    LOG_LEVEL: 'silly',
    TREASURY_ADDRESS: stack.devnet.accounts.treasury.address,
    RELAYER_ADDRESSES: stack.devnet.accounts.relayers.map((r) => r.address).join(','),
  });
});
afterAll(async () => {
  await api?.stop();
  await stack?.stop();
});

it('the API runs with addresses only (no private key in its environment) while the worker settles', async () => {
  const env = await import('node:fs').then((fs) => fs.readFileSync(`/proc/${api.pid}/environ`, 'utf8'));
  expect(env).not.toContain('PRIVATE_KEY');
  expect(env).not.toContain(stack.devnet.accounts.treasury.privateKey.slice(2));

  const http = supertest(api.url);
  const supported = await http.get('/x402/supported');
  expect(supported.body.signers['eip155:*'].map((s: string) => s.toLowerCase()).sort()).toEqual(
    [...stack.devnet.accounts.relayers.map((r) => r.address), stack.devnet.accounts.treasury.address].map((a) => a.toLowerCase()).sort(),
  );
  const p = await stack.payment();
  const v = await http.post('/v1/verify').send(p.formB());
  expect(v.status).toBe(200);
  const s = await http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  expect(s.status).toBe(200);
  let status = '';
  for (let i = 0; i < 200 && status !== 'settled'; i++) {
    status = (await http.get(`/v1/settlements/${s.body.settlement_id}`)).body.status;
    if (status !== 'settled') await sleep(50);
  }
  expect(status).toBe('settled');
});

it('an API process without TREASURY_ADDRESS (and no key) stops with one line naming it', async () => {
  const { TREASURY_PRIVATE_KEY: _t, RELAYER_PRIVATE_KEYS: _r, ...withoutKeys } = stack.env;
  expect(() => loadApiConfig(withoutKeys)).toThrow('TREASURY_ADDRESS is required but not set');
  expect(() => loadApiConfig({ ...withoutKeys, TREASURY_ADDRESS: stack.devnet.accounts.treasury.address, RELAYER_ADDRESSES: '0x12' })).toThrow(
    'RELAYER_ADDRESSES entry 1 must be a 20-byte 0x-prefixed hex address',
  );
});

it('/readyz names the failed RPC but never echoes its error (an RPC URL carries its provider key)', async () => {
  const secretPath = 'v2/sk-provider-key-0123456789';
  const broken = buildApi(loadApiConfig({ ...stack.env, RPC_URL_84532: `http://127.0.0.1:1/${secretPath}` }), createSilentLogger());
  try {
    let res = await supertest(broken.app).get('/readyz');
    // the new Redis connection may still be connecting on the first call
    for (let i = 0; i < 40 && res.body.checks?.redis !== 'ok'; i++) {
      await sleep(50);
      res = await supertest(broken.app).get('/readyz');
    }
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'not_ready', checks: { postgres: 'ok', [QUEUE_READINESS_CHECK]: 'ok', 'rpc:eip155:84532': 'failed' } });
    expect(res.text).not.toContain(secretPath);
    expect(res.text).not.toContain('127.0.0.1:1');
  } finally {
    await broken.close();
  }
});

describe('Idempotency-Key is scoped per client', () => {
  it('one client cannot squat (or replay) another client key; the same client still gets its replay', async () => {
    const [mine, theirs] = [await stack.payment(), await stack.payment()];
    const key = 'order-1234';
    const first = await stack.http.post('/v1/verify').set('Idempotency-Key', key).set('X-API-Key', 'client-a').send(mine.formB());
    expect(first.status).toBe(200);
    // another client (another API key) with the same Idempotency-Key and another body: its own answer, not 422
    const other = await stack.http.post('/v1/verify').set('Idempotency-Key', key).set('X-API-Key', 'client-b').send(theirs.formB());
    expect(other.status).toBe(200);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(other.body.verification_id).not.toBe(first.body.verification_id);
    // without an API key, the client address is the scope: a third client again gets its own answer
    const anonymous = await stack.http.post('/v1/verify').set('Idempotency-Key', key).send((await stack.payment()).formB());
    expect(anonymous.status).toBe(200);
    // the first client: replayed as before, and a different body is still 422
    const replay = await stack.http.post('/v1/verify').set('Idempotency-Key', key).set('X-API-Key', 'client-a').send(mine.formB());
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect((await stack.http.post('/v1/verify').set('Idempotency-Key', key).set('X-API-Key', 'client-a').send(theirs.formB())).status).toBe(422);
  });
});

it("merchants' webhook secrets and settle keys never reach the API's logs", async () => {
  const http = supertest(api.url);
  const m = Wallet.createRandom();
  const call = async (action: MerchantAction, path: string) =>
    http.post(`/v1/merchants/${m.address}/${path}`).send({ proof: await merchantProof(m, m.address, action) });
  const secret = (await call(MerchantAction.GetWebhookSecret, 'webhook-secret')).body.secret as string;
  const key = (await call(MerchantAction.EnableSettleProtection, 'settle-key')).body.settle_key as string;
  expect(secret).toMatch(/^whsec_/);
  expect(key).toMatch(/^fsk_/);
  // the key travels in a header, on settle and on reads (a refused settle and an accepted read)
  await http.post('/v1/settle').set('Authorization', `Bearer ${key}`).send({ verification_id: `ver_${'0'.repeat(32)}`, destination_address: m.address });
  await http.get('/v1/webhooks/deliveries').set('Authorization', `Bearer ${key}`).query({ verification_id: `ver_${'0'.repeat(32)}` });
  await sleep(200);
  const logs = api.lines.join('\n');
  expect(logs).toContain(`/v1/merchants/${m.address}/webhook-secret`);
  expect(logs).not.toContain(secret.slice('whsec_'.length));
  expect(logs).not.toContain(key.slice('fsk_'.length));
});
