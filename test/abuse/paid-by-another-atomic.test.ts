// Attack (issue 40, item 2) on the atomic path, with the real USDC on anvil and the compiled keyless worker: our
// batch's settle transaction is in the node's pool when a stranger sends the payer's transferWithAuthorization
// with a higher tip (a front-run on a public mempool, the payer's wallet sending it twice, a merchant failing
// over between facilitators), so the stranger's goes first in the block and our item finds the authorization
// used. The payer was charged and the merchant paid: the x402 settle answers success with the stranger's
// transaction, and no fee was taken. Before, the settlement ended `failed` and x402 answered `success: false`
// while its details said merchant_paid and customer_charged: the middleware refused a buyer who had paid.
// (paid-by-another 5) a merchant that front-runs our batches (its own payments, executed ahead of ours) spends
// our relayer's gas each time and pays no fee: each counts toward its failure pause (MERCHANT_PAUSE_AFTER_REVERTS,
// 3 in 10 minutes by default), after which its settlements fail before anything is sent, nothing charged.
import { Contract, Wallet, parseUnits } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { balances, difference, newMerchant, sentByUs } from '../support/chain-actions';
import { startTestStack, type PaymentBodies, type TestStack } from '../support/test-stack';
import { x402V2Request } from '../support/x402-request';
import { abuseReport } from './abuse-report';

const PRICE = 10_000n; // the stack's payment, "$0.01"
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ executor: true, devnet: { blockTime: 1 }, env: { SETTLE_WAIT_TIMEOUT_MS: '20000' } });
  await stack.startWorker();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

async function until<T>(what: string, read: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The payer's authorization executed by a stranger (the deployer's key), with a tip that puts it first in its block. */
async function executeAsStranger(p: PaymentBodies): Promise<string> {
  const stranger = new Wallet(stack.devnet.accounts.deployer.privateKey, stack.devnet.provider);
  const token = new Contract(stack.devnet.token, ['function transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)'], stranger);
  const a = p.authorization;
  const tx = await token.transferWithAuthorization(a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, p.signature, {
    gasLimit: 200_000n,
    maxPriorityFeePerGas: parseUnits('50', 'gwei'),
    maxFeePerGas: parseUnits('100', 'gwei'),
  });
  return tx.hash as string;
}

/**
 * Settles the payment on the atomic path with mining held: once our settle transaction is in the pool, a stranger
 * executes the payment with a higher tip, and one block mines both, the stranger's first.
 */
async function frontRunOurBatch(p: PaymentBodies) {
  const body = x402V2Request(p.authorization, p.signature, { payTo: p.authorization.to, amount: p.authorization.value, asset: stack.devnet.token });
  expect((await stack.http.post('/x402/verify').send(body)).body.isValid).toBe(true);
  await stack.devnet.provider.send('evm_setIntervalMining', [0]);
  try {
    const answered = stack.http.post('/x402/settle').send(body).then((r) => r);
    const settlementId = await until('the settlement', async () => (await stack.db.prisma.settlement.findFirst({ where: { nonce: p.authorization.nonce } }))?.id);
    const ours = await until('our settle transaction', async () => {
      const item = await stack.db.prisma.settlementBatchItem.findFirst({ where: { settlementId } });
      if (!item) return undefined;
      const tx = await stack.db.prisma.chainTransaction.findFirst({ where: { settlementId: item.batchId, purpose: 'settle' }, include: { attempts: true } });
      return tx?.status === 'broadcast' && tx.attempts[0]?.hash;
    });
    const theirs = await executeAsStranger(p);
    await stack.devnet.provider.send('evm_mine', []);
    await stack.devnet.provider.send('evm_setIntervalMining', [1]);
    return { answer: await answered, ours, theirs };
  } finally {
    await stack.devnet.provider.send('evm_setIntervalMining', [1]);
  }
}

it('(paid-by-another 3) a stranger executes the payment ahead of our batch in its block: x402 answers success with the stranger\'s transaction, no fee', async () => {
  const report = abuseReport(
    'paid-by-another-3-atomic',
    'Payment executed by someone else ahead of our batch',
    "our settle transaction waits in the node's pool; a stranger sends the payer's transferWithAuthorization with a higher tip, mined first in the same block",
  );
  const p = await stack.payment();
  const before = await balances(stack.devnet);
  const { answer, ours, theirs } = await frontRunOurBatch(p);
  const [theirReceipt, ourReceipt] = await Promise.all([stack.devnet.provider.getTransactionReceipt(theirs), stack.devnet.provider.getTransactionReceipt(ours)]);
  const change = difference(await balances(stack.devnet), before);
  report.check("the stranger's transaction and ours in one block, the stranger's first", 'true', String(theirReceipt!.blockNumber === ourReceipt!.blockNumber && theirReceipt!.index < ourReceipt!.index));
  report.check('x402 settle answer: success', true, answer.body.success);
  report.check('x402 settle answer: the transaction that paid', theirs, answer.body.transaction);
  report.check('payer, merchant and treasury balance changes (no fee: our item was undone)', `${-PRICE}, ${PRICE}, 0`, `${change.payer}, ${change.merchant}, ${change.treasury}`);
  report.check('answer text says "nothing was charged"', false, /nothing was charged/i.test(JSON.stringify(answer.body)));
  report.save();
  expect(answer.body).toMatchObject({ success: true, transaction: theirs });
  expect([change.payer, change.merchant, change.treasury]).toEqual([-PRICE, PRICE, 0n]);
}, 90_000);

it('(paid-by-another 5) a merchant that front-runs our batch three times is paused: its next settlement fails before anything is sent', async () => {
  const report = abuseReport(
    'paid-by-another-5-front-running-merchant',
    'A merchant front-running our batches again and again',
    "a fresh merchant's payments are each executed by a stranger ahead of our batch in its block (our relayer's gas spent, no fee), three times; then it settles an honest payment",
  );
  const merchant = await newMerchant(stack.devnet, { balance: 10n * PRICE, allowance: 10n * PRICE });
  const frontRun = [];
  for (let i = 0; i < 3; i++) frontRun.push(await frontRunOurBatch(await stack.payment({ to: merchant.address, value: PRICE })));
  const [merchantBefore, sentBefore] = await Promise.all([stack.devnet.balanceOf(merchant.address), sentByUs(stack.devnet)]);
  const p = await stack.payment({ to: merchant.address, value: PRICE });
  const body = x402V2Request(p.authorization, p.signature, { payTo: p.authorization.to, amount: p.authorization.value, asset: stack.devnet.token });
  expect((await stack.http.post('/x402/verify').send(body)).body.isValid).toBe(true);
  const next = await stack.http.post('/x402/settle').send(body);
  const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: next.headers['x-settlement-id'] as string } });
  const [merchantAfter, sentAfter] = await Promise.all([stack.devnet.balanceOf(merchant.address), sentByUs(stack.devnet)]);

  report.check('the three front-run payments answered success (paid)', 3, frontRun.filter((f) => f.answer.body.success === true).length);
  report.check('the next settlement', 'failed: merchant paused', `${row.state}: ${(row.errorDetails as { reason?: string } | null)?.reason?.startsWith('merchant paused') ? 'merchant paused' : row.errorMessage}`);
  report.check('transactions sent by the treasury and relayers for it', 0, sentAfter - sentBefore);
  report.check('merchant balance change for it (no fee)', '0', String(merchantAfter - merchantBefore));
  report.save();
  expect(frontRun.every((f) => f.answer.body.success === true)).toBe(true);
  expect(next.body.success).toBe(false);
  expect(row.state).toBe('failed');
  expect(row.errorDetails).toMatchObject({ reason: 'merchant paused after repeated fee transfer reverts', paused_until: expect.any(String) });
  expect(sentAfter - sentBefore).toBe(0);
  expect(merchantAfter - merchantBefore).toBe(0n);
}, 150_000);
