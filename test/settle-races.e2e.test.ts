// Races with the outside world between the fee and the transfer, on a chain with 1 s blocks.
import { Wallet } from 'ethers';
import { balances, cancelAuthorization, difference } from './support/chain-actions';
import { PRICE_UNITS, startTestStack, TestStack } from './support/test-stack';
import { setTimeout as sleep } from 'node:timers/promises';

const FEE = 10_000n;
let stack: TestStack;
let worker: Awaited<ReturnType<TestStack['startWorker']>>;

beforeAll(async () => {
  stack = await startTestStack({ devnet: { blockTime: 1 } });
  worker = await stack.startWorker();
});
afterAll(async () => {
  await stack?.stop();
});

/**
 * Verifies and starts a Form B settlement; resolves once the fee transaction is at the node, with mining
 * paused so that it is not mined yet: the test's own transaction then joins the fee's block (`mineBlock`),
 * before the worker can send its transfer (which it does as soon as the fee's block is in).
 */
async function settleUntilFeeSent() {
  const p = await stack.payment();
  await stack.devnet.provider.send('evm_setIntervalMining', [0]);
  const v = await stack.http.post('/v1/verify').send(p.formB());
  const created = await stack.http
    .post('/v1/settle')
    .send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  const settlementId = created.body.settlement_id as string;
  for (let i = 0; i < 200; i++) {
    const fee = await stack.db.prisma.chainTransaction.findFirst({ where: { settlementId, purpose: 'fee' }, include: { attempts: true } });
    if (fee && fee.status === 'broadcast') return { p, settlementId };
    await sleep(20);
  }
  throw new Error('the fee was never sent');
}

/** Mines the block that holds the fee and the test's transaction, then lets the chain run on its own again. */
async function mineBlock(): Promise<void> {
  await stack.devnet.provider.send('evm_mine', []);
  await stack.devnet.provider.send('evm_setIntervalMining', [1]);
}

async function finalStatus(settlementId: string) {
  for (let i = 0; i < 150; i++) {
    const res = await stack.http.get(`/v1/settlements/${settlementId}`);
    if (res.body.status !== 'pending') return res.body;
    await sleep(100);
  }
  throw new Error(`settlement never ended; worker said:\n${worker.lines.slice(-15).join('\n')}`);
}

it('the payer cancels after the fee was sent: settlement_failed, fee kept, payer not charged', async () => {
  const before = await balances(stack.devnet);
  const { p, settlementId } = await settleUntilFeeSent();
  await cancelAuthorization(stack.devnet, stack.devnet.accounts.payer.privateKey, p.authorization.nonce, { wait: false });
  await mineBlock();
  const status = await finalStatus(settlementId);
  expect(status.status).toBe('failed');
  expect(status.error).toMatchObject({
    code: 'settlement_failed',
    details: {
      fee_status: 'collected',
      fee_amount: '10000',
      fee_tx_hash: expect.stringMatching(/^0x/),
      merchant_charged: true,
      customer_charged: false,
      settlement_error: expect.stringContaining('authorization is used or canceled'),
    },
  });
  expect(difference(await balances(stack.devnet), before)).toEqual({ payer: 0n, merchant: -FEE, treasury: FEE });
});

it('someone else submits the authorization after our fee (front-running): the merchant was paid, and we say so', async () => {
  const before = await balances(stack.devnet);
  const { p, settlementId } = await settleUntilFeeSent();
  const thirdParty = new Wallet(stack.devnet.accounts.deployer.privateKey, stack.devnet.provider);
  const token = stack.devnet.usdc.connect(thirdParty) as unknown as {
    'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)': (...a: unknown[]) => Promise<{ hash: string }>;
  };
  const a = p.authorization;
  const theirs = await token['transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)'](
    a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, p.signature,
  );
  await mineBlock();
  const status = await finalStatus(settlementId);
  expect(status.status).toBe('settled');
  expect(status.transaction_hash).toBe(theirs.hash);
  expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -PRICE_UNITS, merchant: PRICE_UNITS - FEE, treasury: FEE });
  const history = await stack.db.prisma.settlementTransition.findMany({ where: { settlementId, toState: 'settled' } });
  expect(history[0].note).toMatchObject({ executed_by_third_party: true });
});
