// Attack (issue 40, item 5, the review's first finding), with the real USDC on anvil and the compiled worker, at
// the default CONFIRMATIONS: the sequential fee stays in the node's pool past SETTLE_MAX_HOLD_MS plus the 10 s
// claimed grace (as a gas spike or a stuck treasury nonce would hold it). Before, the x402 settle was answered
// `settlement_pending` with `transaction: ""` (the middleware refuses the buyer), then the fee was mined, the
// transfer sent and the payer charged. Now the request withholds the transfer and answers failed; once the fee
// is mined, the worker sends no transfer: the payer is never charged, the fee is kept.
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi } from '../../apps/api/src/build-api';
import { balances, difference } from '../support/chain-actions';
import { startTestStack, type TestStack } from '../support/test-stack';
import { x402V2Request } from '../support/x402-request';
import { abuseReport } from './abuse-report';
import { servedOrRetried, untilEnded } from './answered-request-support';

const FEE = 10_000n; // the stack's FEE_AMOUNT
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ devnet: { blockTime: 1 } });
  await stack.startWorker();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

it('a sequential x402 settle whose fee is stuck past the hold is answered failed, and its transfer is never sent once the fee is mined', async () => {
  const report = abuseReport(
    'answered-pending-2-stuck-fee',
    'An x402 request answered while its sequential fee is stuck in the pool',
    'mining stopped (evm_setIntervalMining 0) through the settle request (SETTLE_MAX_HOLD_MS 2 s + the 10 s grace); blocks resume after the answer',
  );
  const api = buildApi(loadConfig({ ...stack.env, SETTLE_MAX_HOLD_MS: '2000', SETTLE_WAIT_TIMEOUT_MS: '1000' }), createSilentLogger());
  const p = await stack.payment();
  const body = x402V2Request(p.authorization, p.signature, { payTo: p.authorization.to, amount: p.authorization.value, asset: stack.devnet.token });
  const before = await balances(stack.devnet);
  let answer: supertest.Response;
  await stack.devnet.provider.send('evm_setIntervalMining', [0]);
  try {
    expect((await supertest(api.app).post('/x402/verify').send(body)).body.isValid).toBe(true);
    answer = await supertest(api.app).post('/x402/settle').send(body);
  } finally {
    await stack.devnet.provider.send('evm_setIntervalMining', [1]);
    await api.close();
  }
  const ended = await untilEnded(stack, answer.headers['x-settlement-id'] as string, 60_000);
  const change = difference(await balances(stack.devnet), before);
  const transfers = await stack.db.prisma.chainTransaction.count({ where: { settlementId: ended.id, purpose: 'transfer' } });

  report.check('answer: pending without a transaction (refused by the middleware)', false, answer.body.errorReason === 'settlement_pending' && answer.body.transaction === '');
  report.check('answer: success or a pending naming a transaction (the buyer served)', false, servedOrRetried(answer.body));
  report.check('the settlement ends', 'failed', ended.state);
  report.check('transfers sent after the answer', 0, transfers);
  report.check('payer, merchant and treasury balance changes (the fee kept)', `0, ${-FEE}, ${FEE}`, `${change.payer}, ${change.merchant}, ${change.treasury}`);
  report.save();
  expect(answer.body).toMatchObject({ success: false, errorReason: 'unexpected_settle_error' });
  expect(servedOrRetried(answer.body)).toBe(false);
  expect(ended.state).toBe('failed');
  expect(ended.errorDetails).toMatchObject({ fee_status: 'collected', customer_charged: false });
  expect(transfers).toBe(0);
  expect([change.payer, change.merchant, change.treasury]).toEqual([0n, -FEE, FEE]);
}, 120_000);
