// A slow settle as a merchant's server meets it, through the real @x402/express 2.27 resource server on
// 2 s blocks with a short settle wait: the first /x402/settle answers `settlement_pending` WITH the
// hash of the batch transaction already signed, the middleware retries once (it retries only a pending
// answer that names a transaction), and the retry is reconciled with the same settlement: one fee and
// one transfer on chain, the buyer served. The same when the retry reaches another API process, and when
// the API restarts between the two calls. And a settlement answered as failed (nothing sent in time)
// never moves money afterwards, even once a worker runs it.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { getAddress, parseUnits } from 'ethers';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { startApiProcess, type ApiProcess } from './support/api-process';
import { balances, difference, transfersOnChain } from './support/chain-actions';
import { valueOf } from './support/prometheus-text';
import { startHttpBalancer, type BalancedExchange, type HttpBalancerOptions } from './support/http-balancer';
import { startTestStack, withStackQueues, type TestStack } from './support/test-stack';

const FEE = 10_000n;
const PRICE = 50_000n;
const CONTENT = { forecast: 'sunny' };
const HASH = /^0x[0-9a-f]{64}$/;
// the settle wait is short (as a merchant who answers fast would set it), the hold long enough for a 2 s block
const API_ENV = { API_PROCESSES: '1', LOG_LEVEL: 'warn', SETTLE_WAIT_TIMEOUT_MS: '100', SETTLE_MAX_HOLD_MS: '20000' };

let stack: TestStack;
const servers: Server[] = [];
const apis: ApiProcess[] = [];

beforeAll(async () => {
  stack = await startTestStack({ executor: true, devnet: { blockTime: 2 }, env: { SETTLEMENT_MODE: 'atomic' } });
  const worker = await stack.startWorker();
  await until(async () => worker.lines.some((l) => l.includes('settlements are atomic')));
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await Promise.all(apis.map((a) => a.stop()));
  await stack?.stop();
});

async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

async function api(env: Record<string, string> = {}): Promise<ApiProcess> {
  const started = await startApiProcess({ ...stack.env, ...API_ENV, ...env });
  apis.push(started);
  return started;
}

/** The merchant's own server: @x402/express in front of one paid route, its facilitator at `facilitatorUrl`. */
async function merchantServer(facilitatorUrl: string): Promise<string> {
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register('eip155:84532', new ExactEvmServerScheme());
  const app = express();
  app.use(
    paymentMiddleware(
      {
        'GET /forecast': {
          accepts: {
            scheme: 'exact',
            network: 'eip155:84532',
            payTo: getAddress(stack.devnet.accounts.merchant.address),
            price: { amount: PRICE.toString(), asset: getAddress(stack.devnet.token), extra: { name: 'USDC', version: '2' } },
          },
          description: 'the forecast',
        },
      },
      resourceServer,
    ),
  );
  app.get('/forecast', (_req, res) => {
    res.json(CONTENT);
  });
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
    servers.push(server);
  });
}

function buyerFetch() {
  const buyer = new x402Client()
    .register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(stack.devnet.accounts.payer.privateKey as `0x${string}`)))
    .setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: getAddress(stack.devnet.token), maxAmountPerPayment: '1000000' }] });
  return wrapFetchWithPayment(fetch, buyer);
}

interface PaidRequest {
  status: number;
  body: unknown;
  settles: BalancedExchange[];
  moved: { payer: bigint; merchant: bigint; treasury: bigint };
  fees: number;
  payments: number;
  nonce: string;
}

/** One paid request of the buyer through a balancer routed by `options`, with what it moved on chain. */
async function paidRequest(options: HttpBalancerOptions): Promise<PaidRequest> {
  const balancer = await startHttpBalancer(options);
  try {
    const merchantUrl = await merchantServer(`${balancer.url}/x402`);
    const fromBlock = (await stack.devnet.provider.getBlockNumber()) + 1;
    const before = await balances(stack.devnet);
    const res = await buyerFetch()(`${merchantUrl}/forecast`);
    const body = await res.json().catch(() => undefined);
    const settles = balancer.of('POST', '/x402/settle');
    const nonce = (settles[0]?.requestBody as { paymentPayload: { payload: { authorization: { nonce: string } } } }).paymentPayload.payload.authorization.nonce;
    // logs are counted from the block after the request began: on 2 s blocks a quick refusal may come before it is mined
    await until(async () => (await stack.devnet.provider.getBlockNumber()) >= fromBlock);
    const { merchant, payer, treasury } = stack.devnet.accounts;
    return {
      status: res.status,
      body,
      settles,
      moved: difference(await balances(stack.devnet), before),
      fees: await transfersOnChain(stack.devnet, fromBlock, merchant.address, treasury.address),
      payments: await transfersOnChain(stack.devnet, fromBlock, payer.address, merchant.address),
      nonce,
    };
  } finally {
    await balancer.close();
  }
}

/**
 * Runs paid requests until one's first settle answer was pending (a 2 s block can, rarely, be mined within
 * the short wait, and then the first answer is already final): the scenario under test, seen to happen.
 */
async function pendingThenSettled(options: () => HttpBalancerOptions): Promise<PaidRequest> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const paid = await paidRequest(options());
    if ((paid.settles[0]?.body as { errorReason?: string }).errorReason === 'settlement_pending') return paid;
    expect(paid.status).toBe(200);
  }
  throw new Error('three paid requests in a row were settled within the short wait: no pending answer to test');
}

/** A pending answer naming the transaction, then the retry settled by that same transaction: one settlement, one fee, one transfer. */
async function expectReconciled(paid: PaidRequest): Promise<void> {
  expect(paid.settles).toHaveLength(2);
  const [first, retry] = paid.settles.map((s) => s.body as { success: boolean; errorReason?: string; transaction: string });
  expect(first).toMatchObject({ success: false, errorReason: 'settlement_pending', transaction: expect.stringMatching(HASH) });
  expect(retry).toMatchObject({ success: true, transaction: first.transaction });
  expect({ status: paid.status, body: paid.body }).toEqual({ status: 200, body: CONTENT });
  expect(paid.moved).toEqual({ payer: -PRICE, merchant: PRICE - FEE, treasury: FEE });
  expect({ fees: paid.fees, payments: paid.payments }).toEqual({ fees: 1, payments: 1 });
  const settlements = await stack.db.pool.query(`SELECT id, state, settlement_tx_hash FROM settlements WHERE nonce = $1`, [paid.nonce.toLowerCase()]);
  expect(settlements.rows).toEqual([expect.objectContaining({ state: 'settled', settlement_tx_hash: first.transaction })]);
  const sent = await stack.db.pool.query(
    `SELECT t.purpose FROM chain_transactions t JOIN settlement_batch_items i ON i.batch_id = t.settlement_id WHERE i.settlement_id = $1`,
    [settlements.rows[0].id],
  );
  expect(sent.rows).toEqual([{ purpose: 'settle' }]);
}

it('a slow settle answers settlement_pending with the batch hash; the middleware retries once and the buyer is served, charged once', async () => {
  const one = await api();
  await expectReconciled(await pendingThenSettled(() => ({ route: () => one.url })));
}, 120_000);

it('the retry reaching another API process is reconciled with the same settlement', async () => {
  const [first, second] = [await api(), await api()];
  const paid = await pendingThenSettled(() => ({ route: (r) => (r.path === '/x402/settle' && r.seq === 2 ? second.url : first.url) }));
  await expectReconciled(paid);
  expect(paid.settles.map((s) => s.target)).toEqual([first.url, second.url]);
}, 120_000);

it('an API restart between the pending answer and the retry: the new process reconciles with the same settlement', async () => {
  let current = await api();
  const targets: string[] = [];
  const paid = await pendingThenSettled(() => ({
    route: () => current.url,
    async beforeAnswer(exchange) {
      if (exchange.path !== '/x402/settle' || exchange.seq !== 1 || (exchange.body as { success: boolean }).success) return;
      // the process that answered pending goes away before the middleware hears the answer
      targets.push(exchange.target);
      await current.stop();
      current = await api();
      targets.push(current.url);
    },
  }));
  await expectReconciled(paid);
  expect(paid.settles.map((s) => s.target)).toEqual(targets.slice(-2));
}, 180_000);

it('a settlement with nothing sent by the hold is stopped and answered failed, and never moves money afterwards', async () => {
  // the worker takes the settlement to collect_fee and waits there: the network's base fee is above its cap
  await stack.killWorkers();
  const worker = await stack.startWorker({ MAX_FEE_PER_GAS_GWEI_84532: '2' });
  await until(async () => worker.lines.some((l) => l.includes('settlements are atomic')));
  await stack.devnet.provider.send('anvil_setNextBlockBaseFeePerGas', [`0x${parseUnits('3', 'gwei').toString(16)}`]);
  await stack.devnet.provider.send('evm_mine', []);
  const slow = await api({ SETTLE_WAIT_TIMEOUT_MS: '200', SETTLE_MAX_HOLD_MS: '1500' });
  const fromBlock = (await stack.devnet.provider.getBlockNumber()) + 1;
  const paid = await paidRequest({ route: () => slow.url });
  expect(paid.settles).toHaveLength(1);
  expect(paid.settles[0].body).toMatchObject({ success: false, transaction: '' });
  expect((paid.settles[0].body as { errorReason: string }).errorReason).not.toBe('settlement_pending');
  expect(paid.status).not.toBe(200);
  const [stopped] = (await stack.db.pool.query(`SELECT id, state, error_details, payment_key, send_claimed_at FROM settlements WHERE nonce = $1`, [paid.nonce.toLowerCase()])).rows;
  expect(stopped).toMatchObject({
    state: 'failed',
    payment_key: null,
    send_claimed_at: null,
    error_details: expect.objectContaining({ stopped_by: 'settle_request', stopped_in: 'collect_fee', merchant_charged: false }),
  });
  // operators see it: a stop means the worker is slow or held
  expect(valueOf(await (await fetch(`${slow.url}/metrics`)).text(), 'x402_settlements_stopped_total')).toBe(1);

  // the base fee comes down, the worker's waiting job runs again: it finds the settlement final and sends nothing
  await until(async () => Boolean((await withStackQueues(stack.config, (q) => q.settlement.getJob(stopped.id)))?.finishedOn), 60_000);
  const block = await stack.devnet.provider.getBlockNumber();
  await until(async () => (await stack.devnet.provider.getBlockNumber()) >= block + 2);
  const { merchant, payer, treasury } = stack.devnet.accounts;
  expect(await transfersOnChain(stack.devnet, fromBlock, merchant.address, treasury.address)).toBe(0);
  expect(await transfersOnChain(stack.devnet, fromBlock, payer.address, merchant.address)).toBe(0);
  expect(await stack.devnet.usdc.authorizationState(payer.address, paid.nonce)).toBe(false);
  expect((await stack.db.pool.query(`SELECT state FROM settlements WHERE id = $1`, [stopped.id])).rows[0].state).toBe('failed');
  // nothing stored to send: no transaction of its own, no batch item
  const stored = await stack.db.pool.query(
    `SELECT (SELECT count(*) FROM chain_transactions WHERE settlement_id = $1)::int AS own, (SELECT count(*) FROM settlement_batch_items WHERE settlement_id = $1)::int AS items`,
    [stopped.id],
  );
  expect(stored.rows[0]).toEqual({ own: 0, items: 0 });
  expect(paid.moved).toEqual({ payer: 0n, merchant: 0n, treasury: 0n });
}, 120_000);
