// Attack (issue 40, item 2) on the atomic path, with the real USDC on anvil and the compiled keyless worker: our
// batch's settle transaction is in the node's pool when a stranger sends the payer's transferWithAuthorization
// with a higher tip (a front-run on a public mempool, the payer's wallet sending it twice, a merchant failing
// over between facilitators), so the stranger's goes first in the block and our item finds the authorization
// used. The payer was charged and the merchant paid: the x402 settle answers success with the stranger's
// transaction, and no fee was taken. Before, the settlement ended `failed` and x402 answered `success: false`
// while its details said merchant_paid and customer_charged: the middleware refused a buyer who had paid.
import { Contract, Wallet, parseUnits } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { balances, difference } from '../support/chain-actions';
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

it('(paid-by-another 3) a stranger executes the payment ahead of our batch in its block: x402 answers success with the stranger\'s transaction, no fee', async () => {
  const report = abuseReport(
    'paid-by-another-3-atomic',
    'Payment executed by someone else ahead of our batch',
    "our settle transaction waits in the node's pool; a stranger sends the payer's transferWithAuthorization with a higher tip, mined first in the same block",
  );
  const p = await stack.payment();
  const body = x402V2Request(p.authorization, p.signature, { payTo: p.authorization.to, amount: p.authorization.value, asset: stack.devnet.token });
  expect((await stack.http.post('/x402/verify').send(body)).body.isValid).toBe(true);
  const before = await balances(stack.devnet);
  await stack.devnet.provider.send('evm_setIntervalMining', [0]);
  let theirs: string;
  let ours: string;
  let answer;
  try {
    const answered = stack.http.post('/x402/settle').send(body).then((r) => r);
    const settlementId = await until('the settlement', async () => (await stack.db.prisma.settlement.findFirst({ where: { nonce: p.authorization.nonce } }))?.id);
    ours = await until('our settle transaction', async () => {
      const item = await stack.db.prisma.settlementBatchItem.findFirst({ where: { settlementId } });
      if (!item) return undefined;
      const tx = await stack.db.prisma.chainTransaction.findFirst({ where: { settlementId: item.batchId, purpose: 'settle' }, include: { attempts: true } });
      return tx?.status === 'broadcast' && tx.attempts[0]?.hash;
    });
    theirs = await executeAsStranger(p);
    await stack.devnet.provider.send('evm_mine', []);
    await stack.devnet.provider.send('evm_setIntervalMining', [1]);
    answer = await answered;
  } finally {
    await stack.devnet.provider.send('evm_setIntervalMining', [1]);
  }
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
