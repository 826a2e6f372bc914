// Attack (issue 40, item 2, the review's second finding), with the real USDC, Permit2 and our executor on anvil,
// the compiled worker: a repeat Permit2 customer of the atomic path invalidates the nonce of its second payment
// in Permit2 after verify. The pre-flight finds the nonce used and asks Permit2's mechanism who executed it; the
// candidate is the customer's first payment, executed by our own executor (a transaction to the treasury, not
// to the proxy). Before, that was "from a contract": unattributed, and the settlement was parked for an
// operator (any repeat customer could park its later settlements at will; Permit2 invalidates 256 nonces in one
// transaction). Now our batch is read by its per-item logs: the item for this payer and nonce is not in it, so
// the nonce went unpaid and the settlement fails with nothing charged.
import { Contract, Wallet } from 'ethers';
import { PERMIT2_ADDRESS } from '@facilitator/payment-mechanisms';
import { approvePermit2, permit2Request } from '../support/permit2-request';
import { until } from '../support/until';
import { startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';

const PRICE = 10_000n;
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ executor: true, devnet: { blockTime: 1 }, env: { SETTLE_WAIT_TIMEOUT_MS: '20000' } });
  await stack.startWorker();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

it("a repeat Permit2 customer invalidates its next payment's nonce: our executor's earlier batch is told apart, the settlement fails with nothing charged, not parked", async () => {
  const report = abuseReport(
    'permit2-7-own-executor-attributed',
    "A Permit2 payment our own executor ran, seen by a later payment's search",
    "a payer's first Permit2 payment is settled by our atomic executor; its second is verified, then the payer invalidates that nonce in Permit2 and the merchant settles it",
  );
  const merchant = stack.devnet.accounts.merchant.address;
  const treasury = stack.devnet.accounts.treasury.address.toLowerCase();
  const payer = Wallet.createRandom();
  await stack.devnet.mint(payer.address, 10n * PRICE);
  await approvePermit2(stack.devnet, payer.privateKey);

  const first = await permit2Request(stack.devnet, { payerKey: payer.privateKey, to: merchant, value: PRICE });
  expect((await stack.http.post('/x402/verify').send(first)).body.isValid).toBe(true);
  const paid = await stack.http.post('/x402/settle').send(first);
  expect(paid.body.success).toBe(true);
  const firstTo = (await stack.devnet.provider.getTransaction(paid.body.transaction))?.to?.toLowerCase();

  const second = await permit2Request(stack.devnet, { payerKey: payer.privateKey, to: merchant, value: PRICE });
  const verified = await stack.http.post('/x402/verify').send(second);
  expect(verified.body.isValid).toBe(true);
  const nonce = BigInt(second.paymentPayload.payload.permit2Authorization.nonce);
  const permit2 = new Contract(PERMIT2_ADDRESS, ['function invalidateUnorderedNonces(uint256 wordPos, uint256 mask)'], new Wallet(payer.privateKey, stack.devnet.provider));
  await (await permit2.invalidateUnorderedNonces(nonce >> 8n, 1n << (nonce & 0xffn))).wait();
  const merchantBefore = await stack.devnet.balanceOf(merchant);

  const settle = await stack.http.post('/v1/settle').send({ verification_id: verified.headers['x-verification-id'], destination_address: merchant.toLowerCase() });
  const settlementId = (settle.body.settlement_id ?? settle.body.details?.settlement_id) as string;
  expect(settlementId).toBeTruthy();
  const read = () => stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: settlementId } });
  // ended, or parked for an operator (what it was before)
  await until('the settlement to end or be parked', async () => {
    const s = await read();
    return s.state === 'failed' || s.state === 'settled' || s.attentionAt !== null;
  }, 40_000);
  const row = await read();
  const merchantChange = (await stack.devnet.balanceOf(merchant)) - merchantBefore;

  report.check('the first payment was executed by our executor (a transaction to the treasury)', treasury, firstTo);
  report.check('the second settlement is parked for an operator', false, row.attentionAt !== null);
  report.check('the second settlement ends', 'failed', row.state);
  report.check('merchant balance change for the second (no fee)', '0', String(merchantChange));
  report.note(`ended as: ${row.errorMessage}`);
  report.save();
  expect(firstTo).toBe(treasury);
  expect(row.attentionAt).toBeNull();
  expect(row.state).toBe('failed');
  expect(merchantChange).toBe(0n);
}, 120_000);
