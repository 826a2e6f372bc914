// The merchant page's API: a signed sign-in opens a session that reads one merchant's own records (its
// settlements, fees, allowance, webhook deliveries, a CSV), and nothing of anyone else's.
import { Wallet } from 'ethers';
import { MerchantAction } from '@facilitator/merchants';
import { merchantProof, webhookSecretOf } from './support/merchant-client';
import { FAST_WEBHOOK_RETRIES, settlePaymentsWithWebhooks, signIn } from './support/merchant-page-fixture';
import { startTestStack, type TestStack } from './support/test-stack';
import { WebhookReceiver } from './support/webhook-receiver';

const PAYMENTS = 3;
let stack: TestStack;
let receiver: WebhookReceiver;
let merchant: Wallet;
let settlementIds: string[];

beforeAll(async () => {
  [stack, receiver] = await Promise.all([startTestStack({ env: FAST_WEBHOOK_RETRIES }), new WebhookReceiver().start()]);
  merchant = new Wallet(stack.devnet.accounts.merchant.privateKey);
  await stack.startWorker();
  settlementIds = await settlePaymentsWithWebhooks(stack, receiver, 'merchant-page', PAYMENTS);
}, 120_000);
afterAll(async () => {
  await Promise.all([stack?.stop(), receiver?.stop()]);
});

const read = (token: string, path: string, address = merchant.address) => stack.http.get(`/v1/merchants/${address}/${path}`).set('authorization', `Bearer ${token}`);

/** CSV as the RFC says: quoted cells, "" for a quote, CRLF lines (no spreadsheet library: the format is small). */
function parseCsv(text: string): string[][] {
  return text.trimEnd().split('\r\n').map((line) => [...line.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1].replace(/""/g, '"')));
}

describe('sign-in', () => {
  it('a signed session.create answers a 30-minute session token', async () => {
    const proof = await merchantProof(merchant, merchant.address, MerchantAction.CreateSession);
    const res = await stack.http.post(`/v1/merchants/${merchant.address}/session`).send({ proof });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ merchant: merchant.address.toLowerCase(), session_token: expect.stringMatching(/^fms_[A-Za-z0-9_-]{43}$/), expires_at: expect.any(String) });
    const lifetime = new Date(res.body.expires_at).getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(29 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(30 * 60_000 + 5_000);
    // the token itself is never stored, only its hash
    const { rows } = await stack.db.pool.query('SELECT token_hash FROM merchant_sessions');
    expect(rows.map((r) => r.token_hash)).not.toContain(res.body.session_token);
  });

  it('refuses a replayed sign-in (401)', async () => {
    const proof = await merchantProof(merchant, merchant.address, MerchantAction.CreateSession);
    expect((await stack.http.post(`/v1/merchants/${merchant.address}/session`).send({ proof })).status).toBe(201);
    const again = await stack.http.post(`/v1/merchants/${merchant.address}/session`).send({ proof });
    expect(again.status).toBe(401);
    expect(again.body.error).toMatchObject({ code: 'unauthorized', message: expect.stringContaining('used already') });
  });

  it('refuses an expired sign-in (401)', async () => {
    const proof = await merchantProof(merchant, merchant.address, MerchantAction.CreateSession, {}, { lifetimeSeconds: -5 });
    const res = await stack.http.post(`/v1/merchants/${merchant.address}/session`).send({ proof });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toMatch(/expired/);
  });

  it("refuses a signature by another key, and another action's signature (401)", async () => {
    const stranger = Wallet.createRandom();
    const forged = await merchantProof(stranger, merchant.address, MerchantAction.CreateSession);
    expect((await stack.http.post(`/v1/merchants/${merchant.address}/session`).send({ proof: forged })).status).toBe(401);
    // a signature meant to read the webhook secret does not open a session
    const other = await merchantProof(merchant, merchant.address, MerchantAction.GetWebhookSecret);
    expect((await stack.http.post(`/v1/merchants/${merchant.address}/session`).send({ proof: other })).status).toBe(401);
  });

  it('a malformed body or address is a 400 in the envelope', async () => {
    const res = await stack.http.post(`/v1/merchants/${merchant.address}/session`).send({ proof: { nonce: 'x' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect((await stack.http.post('/v1/merchants/0x12/session').send({})).status).toBe(400);
  });
});

describe('reads with the session', () => {
  it('settlements: newest first, paged by a cursor, every row the merchant own', async () => {
    const token = await signIn(stack, merchant);
    const first = await read(token, 'settlements?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.settlements).toHaveLength(2);
    expect(first.body.next_before).toEqual(expect.any(String));
    const second = await read(token, `settlements?limit=2&before=${first.body.next_before}`);
    expect(second.body.settlements).toHaveLength(PAYMENTS - 2);
    expect(second.body.next_before).toBeNull();
    const ids = [...first.body.settlements, ...second.body.settlements].map((s: { id: string }) => s.id);
    expect(ids).toEqual([...settlementIds].reverse());
    expect(first.body.settlements[0]).toEqual({
      id: settlementIds[PAYMENTS - 1],
      created_at: expect.any(String),
      network: 'eip155:84532',
      payer: stack.devnet.accounts.payer.address.toLowerCase(),
      amount: '10000',
      fee: '10000',
      fee_collected: true,
      state: 'settled',
      settlement_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      fee_tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
  });

  it('account: fees paid, and the allowance left as the chain says it, with the settlements it covers', async () => {
    const token = await signIn(stack, merchant);
    const res = await read(token, 'account');
    expect(res.status).toBe(200);
    const treasury = stack.devnet.accounts.treasury.address;
    const [allowance, balance] = await Promise.all([stack.devnet.allowance(merchant.address, treasury), stack.devnet.balanceOf(merchant.address)]);
    const spendable = allowance < balance ? allowance : balance;
    expect(res.body).toEqual({
      merchant: merchant.address.toLowerCase(),
      treasury: treasury.toLowerCase(),
      fees_paid: String(10_000 * PAYMENTS),
      settlements_with_fee: PAYMENTS,
      networks: [
        {
          network: 'eip155:84532',
          token: stack.devnet.token.toLowerCase(),
          fee: '10000',
          allowance: allowance.toString(),
          balance: balance.toString(),
          settlements_covered: (spendable / 10_000n).toString(),
          read_at: expect.any(String),
        },
      ],
    });
  });

  it('webhook deliveries: newest first, each with its attempts (a refused one, then the delivery)', async () => {
    const token = await signIn(stack, merchant);
    const res = await read(token, 'webhook-deliveries?limit=100');
    expect(res.status).toBe(200);
    expect(res.body.next_before).toBeNull();
    const deliveries = res.body.deliveries as Array<{ created_at: string; status: string; event_type: string; attempts: Array<{ status_code: number | null }> }>;
    expect(deliveries).toHaveLength(2 * PAYMENTS);
    expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);
    expect(deliveries.map((d) => d.created_at)).toEqual([...deliveries.map((d) => d.created_at)].sort().reverse());
    const retried = deliveries.filter((d) => d.attempts.length === 2);
    expect(retried).toHaveLength(1);
    expect(retried[0].attempts.map((a) => a.status_code)).toEqual([503, 200]);
  });

  it('the CSV download has a header and every settlement, newest first (cell escaping: presenters/csv.test.ts)', async () => {
    const token = await signIn(stack, merchant);
    const res = await read(token, 'settlements.csv').buffer(true).parse((r, done) => {
      let text = '';
      r.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      r.on('end', () => done(null, text));
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename=settlements-${merchant.address.toLowerCase()}.csv`);
    const [header, ...rows] = parseCsv(res.body as string);
    expect(header).toEqual(['id', 'created_at', 'network', 'payer', 'amount', 'fee', 'fee_collected', 'state', 'settlement_tx_hash', 'fee_tx_hash']);
    expect(rows.map((r) => r[0])).toEqual([...settlementIds].reverse());
    expect(rows.every((r) => r.length === header.length && r[7] === 'settled')).toBe(true);
  });

  it('bounds the page size and refuses a forged cursor (400)', async () => {
    const token = await signIn(stack, merchant);
    for (const query of ['limit=101', 'limit=0', 'limit=abc', 'limit=1&limit=2', 'other=1', `before=${Buffer.from('not|a|cursor').toString('base64url')}`]) {
      const res = await read(token, `settlements?${query}`);
      expect({ query, status: res.status, code: res.body.error?.code }).toEqual({ query, status: 400, code: 'invalid_request' });
    }
  });
});

describe('a session reads its own merchant only', () => {
  it("another merchant's session cannot read the first one's records (401), nor can none", async () => {
    const other = Wallet.createRandom();
    const otherToken = await signIn(stack, other);
    for (const path of ['account', 'settlements', 'settlements.csv', 'webhook-deliveries']) {
      const res = await read(otherToken, path);
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
      expect(res.body.error.code).toBe('unauthorized');
      expect((await stack.http.get(`/v1/merchants/${merchant.address}/${path}`)).status).toBe(401);
    }
    // its own records: none
    expect((await read(otherToken, 'settlements', other.address)).body).toEqual({ settlements: [], next_before: null });
    expect((await read(otherToken, 'webhook-deliveries', other.address)).body).toEqual({ deliveries: [], next_before: null });
  });

  it('a settle key or an operator key is not a session', async () => {
    const token = await signIn(stack, merchant);
    expect((await read(token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), 'account')).status).toBe(401);
    expect((await read('fsk_whatever', 'account')).status).toBe(401);
  });

  it('signing out ends the session at once; an expired session is refused', async () => {
    const token = await signIn(stack, merchant);
    expect((await read(token, 'account')).status).toBe(200);
    expect((await stack.http.delete(`/v1/merchants/${merchant.address}/session`).set('authorization', `Bearer ${token}`)).status).toBe(204);
    const after = await read(token, 'account');
    expect(after.status).toBe(401);
    expect(after.body.error.message).toMatch(/sign in again/);

    const expiring = await signIn(stack, merchant);
    await stack.db.pool.query(`UPDATE merchant_sessions SET expires_at = now() - interval '1 second'`);
    expect((await read(expiring, 'settlements')).status).toBe(401);
  });

  it('a session cannot change anything: rotating the secret still needs its own signature', async () => {
    const token = await signIn(stack, merchant);
    const before = await webhookSecretOf(stack, merchant);
    const res = await stack.http.post(`/v1/merchants/${merchant.address}/webhook-secret/rotate`).set('authorization', `Bearer ${token}`).send({});
    expect(res.status).toBe(400);
    expect(await webhookSecretOf(stack, merchant)).toBe(before);
  });
});
