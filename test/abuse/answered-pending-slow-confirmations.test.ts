// Attack (issue 40, item 5, the review's first finding), with the real USDC on anvil and the compiled worker: a
// sequential x402 settle whose fee needs more confirmations than fit in SETTLE_MAX_HOLD_MS plus the 10 s claimed
// grace (here 15 one-second blocks; in production a few confirmations on a slow chain). Before, the request was
// answered `settlement_pending` with `transaction: ""` (which @x402/core does not retry: the buyer is refused)
// and the settlement went on: the transfer was sent and the payer charged. Now the request withholds the
// transfer it can wait for no longer and answers failed: the payer is never charged; the fee, taken, is kept.
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
  stack = await startTestStack({ devnet: { blockTime: 1 }, env: { CONFIRMATIONS_84532: '15' } });
  await stack.startWorker();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

it('a sequential x402 settle whose fee cannot reach its confirmations within the hold is answered failed, and the payer is never charged', async () => {
  const report = abuseReport(
    'answered-pending-1-slow-confirmations',
    'An x402 request answered before its sequential transfer could be signed',
    'CONFIRMATIONS 15 on 1 s blocks, SETTLE_MAX_HOLD_MS 2 s: the fee is mined at once but needs 15 s of confirmations before the transfer is signed',
  );
  const api = buildApi(loadConfig({ ...stack.env, SETTLE_MAX_HOLD_MS: '2000', SETTLE_WAIT_TIMEOUT_MS: '1000' }), createSilentLogger());
  try {
    const p = await stack.payment();
    const body = x402V2Request(p.authorization, p.signature, { payTo: p.authorization.to, amount: p.authorization.value, asset: stack.devnet.token });
    expect((await supertest(api.app).post('/x402/verify').send(body)).body.isValid).toBe(true);
    const before = await balances(stack.devnet);
    const answer = await supertest(api.app).post('/x402/settle').send(body);
    const ended = await untilEnded(stack, answer.headers['x-settlement-id'] as string, 80_000);
    const change = difference(await balances(stack.devnet), before);
    const transfers = await stack.db.prisma.chainTransaction.count({ where: { settlementId: ended.id, purpose: 'transfer' } });

    report.check('answer: pending without a transaction (refused by the middleware)', false, answer.body.errorReason === 'settlement_pending' && answer.body.transaction === '');
    report.check('answer: success or a pending naming a transaction (the buyer served)', false, servedOrRetried(answer.body));
    report.check('the settlement ends', 'failed', ended.state);
    report.check('transfers sent after the answer', 0, transfers);
    report.check('payer, merchant and treasury balance changes (the fee kept)', `0, ${-FEE}, ${FEE}`, `${change.payer}, ${change.merchant}, ${change.treasury}`);
    report.save();
    expect(answer.body).toMatchObject({ success: false });
    expect(answer.body.errorReason).not.toBe('settlement_pending');
    expect(answer.body.errorReason).toBe('unexpected_settle_error');
    expect(JSON.stringify(answer.body)).not.toMatch(/nothing was charged/i);
    expect(servedOrRetried(answer.body)).toBe(false);
    expect(ended.state).toBe('failed');
    expect(transfers).toBe(0);
    expect([change.payer, change.merchant, change.treasury]).toEqual([0n, -FEE, FEE]);
  } finally {
    await api.close();
  }
}, 150_000);
