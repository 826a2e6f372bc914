// Attacks (issue 40, items 2, 3 and 5) on the sequential path, with the real USDC on anvil, the compiled worker
// and the API in process:
// (paid-by-another 1) someone executes the payer's authorization between the x402 verify and our pre-flight (a
//   front-run, the payer's wallet sending it twice, a merchant failing over between facilitators): the payer is
//   charged and the merchant paid, so the settle answers success with that transaction; before, it answered
//   `success: false` ("nothing was charged") and the middleware refused a buyer who had paid.
// (paid-by-another 2) a stranger executes it right after our fee, and a reorg then removes the stranger's block:
//   the settlement had been reported settled on the stranger's transaction; it is watched like ours, and the
//   merchant is told it was not paid (finality changed, settlement.reorged, merchant_paid false). Before, it
//   stayed "settled / final" at zero confirmations and nobody was told.
// (paid-by-another 4) a Permit2 payment a stranger executed through x402's exact proxy before our pre-flight is
//   settled on it, and after a reorg that moves it to another block the watcher asks Permit2's mechanism who
//   executed it (not EIP-3009's AuthorizationUsed): still paid, watched in its new block, nobody told "not paid".
// (pending 1) an x402 settle whose hold ends while the sequential fee is in flight is answered pending only
//   with the transfer's hash (the transaction that moves the payer's money), never the fee's: the middleware's
//   one retry follows that hash to the payment's outcome.
import { Contract, Wallet, parseUnits } from 'ethers';
import supertest from 'supertest';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi } from '../../apps/api/src/build-api';
import { balances, difference, newMerchant } from '../support/chain-actions';
import { startTestStack, type PaymentBodies, type TestStack } from '../support/test-stack';
import { WebhookReceiver } from '../support/webhook-receiver';
import { x402V2Request } from '../support/x402-request';
import { approvePermit2, permit2Request } from '../support/permit2-request';
import { X402_EXACT_PERMIT2_PROXY } from '@facilitator/payment-mechanisms';
import { abuseReport } from './abuse-report';

const FINALITY_DEPTH = 20;
const PRICE = 10_000n; // the stack's payment, "$0.01"
let stack: TestStack;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  stack = await startTestStack({
    devnet: { blockTime: 1 },
    env: { FINALITY_DEPTH_84532: String(FINALITY_DEPTH), FINALITY_POLL_MS: '300', SETTLE_WAIT_TIMEOUT_MS: '20000' },
  });
  await stack.startWorker();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

const x402Body = (p: PaymentBodies) => x402V2Request(p.authorization, p.signature, { payTo: p.authorization.to, amount: p.authorization.value, asset: stack.devnet.token });

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

async function until<T>(what: string, read: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const broadcast = (settlementId: string, purpose: 'fee' | 'transfer') =>
  until(`the ${purpose} of ${settlementId}`, async () => {
    const tx = await stack.db.prisma.chainTransaction.findFirst({ where: { settlementId, purpose }, include: { attempts: true } });
    return tx && tx.attempts.length > 0 && tx.attempts[0].hash;
  });

it('(paid-by-another 1) a payment someone executed before our pre-flight: x402 answers success with that transaction, no fee', async () => {
  const report = abuseReport(
    'paid-by-another-1-preflight',
    'Payment executed by someone else before our pre-flight',
    'the payment verifies at /x402/verify; a stranger then sends the payer\'s transferWithAuthorization itself; the merchant\'s middleware calls /x402/settle',
  );
  const p = await stack.payment();
  const body = x402Body(p);
  const verified = await stack.http.post('/x402/verify').send(body);
  expect(verified.body.isValid).toBe(true);
  const before = await balances(stack.devnet);
  const theirs = await executeAsStranger(p);
  expect((await stack.devnet.provider.waitForTransaction(theirs))?.status).toBe(1);

  const settled = await stack.http.post('/x402/settle').send(body);
  const change = difference(await balances(stack.devnet), before);
  report.check('x402 settle answer: success', true, settled.body.success);
  report.check('x402 settle answer: the transaction that paid', theirs, settled.body.transaction);
  report.check('payer, merchant and treasury balance changes (no fee)', `${-PRICE}, ${PRICE}, 0`, `${change.payer}, ${change.merchant}, ${change.treasury}`);
  report.check('answer text says "nothing was charged"', false, /nothing was charged/i.test(JSON.stringify(settled.body)));
  report.save();
  expect(settled.body).toMatchObject({ success: true, transaction: theirs });
  expect([change.payer, change.merchant, change.treasury]).toEqual([-PRICE, PRICE, 0n]);
  expect(JSON.stringify(settled.body)).not.toMatch(/nothing was charged/i);
  const record = (await stack.http.get(`/v1/settlements/${settled.headers['x-settlement-id']}`)).body;
  expect(record).toMatchObject({ status: 'settled', transaction_hash: theirs, details: { fee_collection_status: 'not_collected' } });
}, 60_000);

it("(paid-by-another 1b) the payer's last funds: executed by someone else before the settle, x402 answers success, not the intake's 'payer balance insufficient'", async () => {
  const report = abuseReport(
    'paid-by-another-1b-intake',
    "Payment of a payer's whole balance executed by someone else before the settle's funds check",
    "a payer holding exactly the price pays; the payment verifies at /x402/verify; a stranger sends the payer's transferWithAuthorization itself, so the payer's balance is 0; the merchant's middleware calls /x402/settle (issue 41's intake funds check reads the payer's balance first)",
  );
  const payer = Wallet.createRandom();
  await stack.devnet.mint(payer.address, PRICE);
  const p = await stack.payment({ payerKey: payer.privateKey });
  const body = x402Body(p);
  const verified = await stack.http.post('/x402/verify').send(body);
  expect(verified.body.isValid).toBe(true);
  const before = await balances(stack.devnet, stack.devnet.accounts.merchant.address, payer.address);
  const theirs = await executeAsStranger(p);
  expect((await stack.devnet.provider.waitForTransaction(theirs))?.status).toBe(1);

  const settled = await stack.http.post('/x402/settle').send(body);
  const change = difference(await balances(stack.devnet, stack.devnet.accounts.merchant.address, payer.address), before);
  report.check('payer, merchant and treasury balance changes (the payer paid, the merchant was paid, no fee)', `${-PRICE}, ${PRICE}, 0`, `${change.payer}, ${change.merchant}, ${change.treasury}`);
  report.check('x402 settle answer: success', true, settled.body.success);
  report.check('x402 settle answer: the transaction that paid', theirs, settled.body.transaction ?? null);
  report.check('answer says the payer lacks funds', false, /payer balance insufficient/i.test(JSON.stringify(settled.body)));
  report.save();
  expect([change.payer, change.merchant, change.treasury]).toEqual([-PRICE, PRICE, 0n]);
  expect(settled.body).toMatchObject({ success: true, transaction: theirs });
}, 60_000);

it("(paid-by-another 1c) a merchant without a fee allowance, paid by someone else's transaction before the settle: x402 answers success, not the intake's insufficient allowance", async () => {
  const report = abuseReport(
    'paid-by-another-1c-intake-merchant',
    "Payment to a merchant without a fee allowance, executed by someone else before the settle's funds check",
    "a merchant that never approved the treasury is paid; the payment verifies at /x402/verify; a stranger sends the payer's transferWithAuthorization itself; the merchant's middleware calls /x402/settle",
  );
  const merchant = await newMerchant(stack.devnet, { balance: 0n, allowance: 0n });
  const p = await stack.payment({ to: merchant.address });
  const body = x402Body(p);
  const verified = await stack.http.post('/x402/verify').send(body);
  expect(verified.body.isValid).toBe(true);
  const theirs = await executeAsStranger(p);
  expect((await stack.devnet.provider.waitForTransaction(theirs))?.status).toBe(1);
  const paid = await stack.devnet.balanceOf(merchant.address);

  const settled = await stack.http.post('/x402/settle').send(body);
  report.check("the merchant's balance: paid by the stranger's transaction", String(PRICE), String(paid));
  report.check('x402 settle answer: success', true, settled.body.success);
  report.check('x402 settle answer: the transaction that paid', theirs, settled.body.transaction ?? null);
  report.save();
  expect(paid).toBe(PRICE);
  expect(settled.body).toMatchObject({ success: true, transaction: theirs });
}, 60_000);

it('(paid-by-another 2) a stranger executes it after our fee, then a reorg removes the stranger\'s block: the merchant is told it was not paid', async () => {
  const report = abuseReport(
    'paid-by-another-2-reorg',
    "Someone else's transaction removed by a reorg",
    "after our fee is sent, a stranger executes the payer's authorization in the fee's block; the settlement is reported settled on it; then anvil_reorg removes that block",
  );
  const url = receiver.endpoint('paid-by-another-reorg');
  const p = await stack.payment();
  const merchant = stack.devnet.accounts.merchant.address;
  // mining held: the fee goes to the node, and the stranger's transaction joins its block, ahead of it
  await stack.devnet.provider.send('evm_setIntervalMining', [0]);
  let theirs: string;
  let settlementId: string;
  try {
    const v = await stack.http.post('/v1/verify').send(p.formB({ webhook_url: url }));
    expect(v.status).toBe(200);
    const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: merchant });
    settlementId = s.body.settlement_id as string;
    await broadcast(settlementId, 'fee');
    theirs = await executeAsStranger(p);
    await stack.devnet.provider.send('evm_mine', []);
  } finally {
    await stack.devnet.provider.send('evm_setIntervalMining', [1]);
  }
  const theirBlock = (await stack.devnet.provider.getTransactionReceipt(theirs))!.blockNumber;
  const settled = await until('settled', async () => {
    const r = (await stack.http.get(`/v1/settlements/${settlementId}`)).body;
    return r.status !== 'pending' && r;
  });
  expect(settled).toMatchObject({ status: 'settled', transaction_hash: theirs, finality: { status: 'watching' } });
  // a reorg removes the stranger's block (and what came after it); its transaction does not come back
  const head = await stack.devnet.provider.getBlockNumber();
  await stack.devnet.provider.send('anvil_reorg', [head - theirBlock + 1, []]);
  expect(await stack.devnet.provider.getTransactionReceipt(theirs)).toBeNull();

  const told = await until('finality changed', async () => {
    const r = (await stack.http.get(`/v1/settlements/${settlementId}`)).body;
    return r.finality?.status === 'changed' && r;
  });
  const reorged = await until('the settlement.reorged delivery', async () =>
    receiver.deliveries('paid-by-another-reorg').map((e) => e.body as { event_type?: string; data: Record<string, unknown> }).find((b) => b.event_type === 'settlement.reorged'),
  );
  const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: settlementId } });
  report.check('reported settled on the stranger\'s transaction before the reorg', theirs, settled.transaction_hash);
  report.check('finality after the reorg', 'changed', told.finality.status);
  report.check('settlement.reorged event says merchant_paid', false, reorged?.data.merchant_paid);
  report.check('the row keeps merchant_paid', false, row.merchantPaid);
  report.save();
  expect(reorged?.data).toMatchObject({ merchant_paid: false, change: { purpose: 'foreign_execution', tx_hash: theirs, now: 'lost' } });
  expect(row.merchantPaid).toBe(false);
}, 120_000);

it('(pending 1) an x402 settle whose hold ends while the sequential fee is in flight names the transfer, never the fee', async () => {
  const report = abuseReport(
    'pending-1-names-the-payment',
    'A pending x402 answer names the payment\'s own transaction',
    'an x402 settle is held (SETTLE_MAX_HOLD_MS 2 s) while its sequential fee waits in the node\'s pool; blocks come back after the hold',
  );
  // an API process of its own with a short hold, on the same database and queues
  const api = buildApi(loadConfig({ ...stack.env, SETTLE_MAX_HOLD_MS: '2000', SETTLE_WAIT_TIMEOUT_MS: '1000' }), createSilentLogger());
  const p = await stack.payment();
  const body = x402Body(p);
  await stack.devnet.provider.send('evm_setIntervalMining', [0]);
  let answer: supertest.Response;
  let fee: string;
  let transfer: string;
  try {
    expect((await supertest(api.app).post('/x402/verify').send(body)).body.isValid).toBe(true);
    const answered = supertest(api.app).post('/x402/settle').send(body).then((r) => r);
    const settlementId = await until('the settlement', async () => (await stack.db.prisma.settlement.findFirst({ where: { nonce: p.authorization.nonce } }))?.id);
    fee = await broadcast(settlementId, 'fee');
    // past the hold, the fee still unmined: then blocks again, so the fee is mined and the transfer sent
    await sleep(3_000);
    await stack.devnet.provider.send('evm_mine', []);
    transfer = await broadcast(settlementId, 'transfer');
    answer = await answered;
  } finally {
    await stack.devnet.provider.send('evm_setIntervalMining', [1]);
    await api.close();
  }
  report.check('the pending answer names the fee', false, answer.body.transaction === fee);
  report.check('it names the transfer, or the settlement settled on it', transfer, answer.body.transaction);
  report.save();
  expect(answer.body.transaction).not.toBe(fee);
  expect(answer.body.transaction).toBe(transfer);
}, 90_000);

it("(paid-by-another 4) a Permit2 payment a stranger executed, moved to another block by a reorg: judged through its mechanism, still paid", async () => {
  const report = abuseReport(
    'paid-by-another-4-permit2-reorg',
    'Permit2 payment executed by someone else, then a reorg',
    "a stranger calls x402's exact proxy with the payer's permit between /x402/verify and /x402/settle; then anvil_reorg takes that block and mines the same transaction in a later one",
  );
  const merchant = stack.devnet.accounts.merchant.address;
  const payer = Wallet.createRandom();
  await stack.devnet.mint(payer.address, 10n * PRICE);
  await approvePermit2(stack.devnet, payer.privateKey);
  const body = await permit2Request(stack.devnet, { payerKey: payer.privateKey, to: merchant, value: PRICE });
  expect((await stack.http.post('/x402/verify').send(body)).body.isValid).toBe(true);
  const { permit2Authorization: permit, signature } = body.paymentPayload.payload;
  const proxy = new Contract(X402_EXACT_PERMIT2_PROXY, [
    'function settle(((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, address owner, (address to, uint256 validAfter) witness, bytes signature)',
  ]);
  const data = proxy.interface.encodeFunctionData('settle', [
    { permitted: permit.permitted, nonce: permit.nonce, deadline: permit.deadline },
    permit.from,
    permit.witness,
    signature,
  ]);
  const stranger = new Wallet(stack.devnet.accounts.deployer.privateKey, stack.devnet.provider);
  const raw = await stranger.signTransaction(
    await stranger.populateTransaction({ to: X402_EXACT_PERMIT2_PROXY, data, gasLimit: 300_000n, maxPriorityFeePerGas: parseUnits('50', 'gwei'), maxFeePerGas: parseUnits('100', 'gwei') }),
  );
  const theirs = (await stack.devnet.provider.broadcastTransaction(raw)).hash;
  const first = await stack.devnet.provider.waitForTransaction(theirs);
  expect(first?.status).toBe(1);

  const settled = await stack.http.post('/x402/settle').send(body);
  expect(settled.body).toMatchObject({ success: true, transaction: theirs });
  const settlementId = settled.headers['x-settlement-id'] as string;
  // the reorg takes the stranger's block and mines the same transaction one block later
  await until('a block past the next', async () => (await stack.devnet.provider.getBlockNumber()) >= first!.blockNumber + 2);
  const head = await stack.devnet.provider.getBlockNumber();
  await stack.devnet.provider.send('anvil_reorg', [head - first!.blockNumber + 1, [[raw, 1]]]);
  const again = await until('the stranger\'s transaction mined again', async () => stack.devnet.provider.getTransactionReceipt(theirs));
  expect(again.blockNumber).not.toBe(first!.blockNumber);

  const watched = await until('the watcher to follow it', async () => {
    const row = await stack.db.prisma.settlementForeignExecution.findUnique({ where: { settlementId } });
    return row && Number(row.blockNumber) === again.blockNumber && row;
  });
  await sleep(2_000); // runs enough for a "not paid" to have been told, were it to be
  const record = (await stack.http.get(`/v1/settlements/${settlementId}`)).body;
  const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: settlementId } });
  report.check("x402 settle answer: success with the stranger's transaction", `true ${theirs}`, `${settled.body.success} ${settled.body.transaction}`);
  report.check('the block watched after the reorg', again.blockNumber, Number(watched.blockNumber));
  report.check('finality after the reorg (not changed: still paid)', 'reorged', record.finality.status);
  report.check('the row keeps merchant_paid', true, row.merchantPaid);
  report.save();
  expect(record).toMatchObject({ status: 'settled', transaction_hash: theirs, finality: { status: 'reorged' } });
  expect(row.merchantPaid).toBe(true);
}, 90_000);
