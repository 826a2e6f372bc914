// Reorgs after `settled` on the atomic path: the settle transaction of a batch is one transaction for
// several settlements. When a reorg removes it, it is sent again once, and every settlement of the batch
// records the reorg and the re-inclusion, then becomes final. The batch can succeed again while one of its
// items fails inside it: that settlement, and only it, is `changed` and its merchant told. A Permit2 item that
// someone else executed while the batch was out is judged through its mechanism: the merchant was paid.
import { Contract, parseUnits, Wallet } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { X402_EXACT_PERMIT2_PROXY } from '@facilitator/payment-mechanisms';
import { transfersOnChain } from './support/chain-actions';
import { approvePermit2, permit2Request } from './support/permit2-request';
import { startTestStack, type TestStack } from './support/test-stack';
import { WebhookReceiver } from './support/webhook-receiver';

const DEPTH = 3;
let stack: TestStack;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  stack = await startTestStack({
    executor: true,
    env: { SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '300', FINALITY_DEPTH_84532: String(DEPTH), FINALITY_POLL_MS: '300' },
  });
  const worker = await stack.startWorker();
  await until(async () => worker.lines.some((l) => l.includes('settlements are atomic')));
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

async function finalityOf(id: string): Promise<{ status: string; reorgs: number } | null> {
  return (await stack.http.get(`/v1/settlements/${id}`)).body.finality;
}

async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await sleep(100);
}

it('a batch removed by a reorg is mined again once; each of its settlements records it, then is final', async () => {
  const { merchant, payer, treasury } = stack.devnet.accounts;
  for (let i = 0; i < DEPTH; i++) await stack.devnet.provider.send('evm_mine', []);
  const start = (await stack.devnet.provider.getBlockNumber()) + 1;
  const verified = await Promise.all(
    [0, 1].map(async () => (await stack.http.post('/v1/verify').send((await stack.payment()).formB())).body.verification_id as string),
  );
  const settled = await Promise.all(
    verified.map((verification_id) => stack.http.post('/v1/settle').send({ verification_id, destination_address: merchant.address })),
  );
  const ids = settled.map((r) => {
    expect(r.status).toBe(200);
    return r.body.settlement_id as string;
  });
  // Form B answers pending at once: the worker settles in the background
  await until(async () => (await Promise.all(ids.map(async (id) => (await stack.http.get(`/v1/settlements/${id}`)).body.status))).every((s) => s === 'settled'));
  const items = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: { in: ids } } });
  expect(new Set(items.map((i) => i.batchId)).size).toBe(1);
  const [tx] = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: items[0].batchId } });
  expect(tx.purpose).toBe('settle');

  await stack.devnet.provider.send('anvil_reorg', [DEPTH, []]);
  expect(await stack.devnet.provider.getTransactionReceipt(tx.minedHash!)).toBeNull();
  await until(async () => (await Promise.all(ids.map(finalityOf))).every((f) => f?.reorgs === 1));
  for (const id of ids) expect(await finalityOf(id)).toMatchObject({ status: 'reorged', reorgs: 1 });
  await until(async () => (await stack.devnet.provider.getTransactionReceipt(tx.minedHash!))?.status === 1);
  for (let i = 0; i < DEPTH; i++) await stack.devnet.provider.send('evm_mine', []);
  await until(async () => (await Promise.all(ids.map(finalityOf))).every((f) => f?.status === 'final'));
  for (const id of ids) expect(await finalityOf(id)).toEqual({ status: 'final', reorgs: 1 });

  // on the chain as it is now: two fees and two payments, nothing twice
  expect(await transfersOnChain(stack.devnet, start, merchant.address, treasury.address)).toBe(2);
  expect(await transfersOnChain(stack.devnet, start, payer.address, merchant.address)).toBe(2);
}, 60_000);

it('a payer who spends the nonce of a paid item while its batch is out of the chain: the batch succeeds again, that settlement is changed and its merchant told; the other is final', async () => {
  const { merchant, payer, treasury, deployer } = stack.devnet.accounts;
  const url = receiver.endpoint('batch-item-changed');
  await stack.devnet.provider.send('evm_mine', []);
  const start = (await stack.devnet.provider.getBlockNumber()) + 1;
  const payments = await Promise.all([stack.payment(), stack.payment()]);
  const ids = await Promise.all(
    payments.map(async (p) => {
      const v = await stack.http.post('/v1/verify').send(p.formB({ webhook_url: url }));
      const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: merchant.address });
      expect(s.status).toBe(200);
      return s.body.settlement_id as string;
    }),
  );
  await until(async () => (await Promise.all(ids.map(async (id) => (await stack.http.get(`/v1/settlements/${id}`)).body.status))).every((s) => s === 'settled'));
  await receiver.waitFor('batch-item-changed', 2); // settlement.completed, each
  const items = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: { in: ids } } });
  expect(new Set(items.map((i) => i.batchId)).size).toBe(1);
  const [tx] = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: items[0].batchId } });

  // the worker is away while the chain reorganises, and the payer signs another authorization with the
  // nonce of its first payment (to itself, elsewhere) and has it mined first
  await stack.killWorkers();
  await stack.devnet.provider.send('anvil_reorg', [DEPTH, []]);
  expect(await stack.devnet.provider.getTransactionReceipt(tx.minedHash!)).toBeNull();
  const [cheated, honest] = ids;
  /** the settlement.reorged events the merchant received, one per event id however often delivered */
  const reorgedEvents = () => [
    ...new Map(
      receiver
        .deliveries('batch-item-changed')
        .filter((e) => e.body.event_type === 'settlement.reorged')
        .map((e) => [e.body.event_id, e]),
    ).values(),
  ];
  const other = await stack.devnet.signTransferAuthorization(payer.privateKey, { to: deployer.address, value: 1n, nonce: payments[0].authorization.nonce });
  const token = stack.devnet.usdc.connect(new Wallet(deployer.privateKey, stack.devnet.provider)) as unknown as {
    'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)': (...a: unknown[]) => Promise<{ wait(): Promise<{ status: number }> }>;
  };
  const a = other.authorization;
  expect((await (await token['transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)'](a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, other.signature)).wait()).status).toBe(1);
  await stack.startWorker();

  // the batch is sent again and succeeds; its first item fails inside it
  await until(async () => (await stack.devnet.provider.getTransactionReceipt(tx.minedHash!))?.status === 1, 30_000);
  await until(async () => (await finalityOf(cheated))?.status === 'changed', 30_000);
  expect(await finalityOf(cheated)).toEqual({ status: 'changed', reorgs: 1 });
  // delivery is at least once: a delivery the killed worker made may come again, so events count by id
  await until(async () => reorgedEvents().length > 0, 20_000);
  const reorged = reorgedEvents();
  expect(reorged).toHaveLength(1);
  expect(reorged[0].body).toMatchObject({
    settlement_id: cheated,
    status: 'changed',
    data: {
      state: 'settled',
      merchant_paid: false,
      fee_collected: false,
      change: {
        purpose: 'settle',
        tx_hash: tx.minedHash,
        now: 'confirmed',
        item: { reported: { merchant_paid: true, fee_collected: true }, now: { merchant_paid: false, fee_collected: false, reason: expect.stringMatching(/used or canceled/) } },
      },
    },
  });

  for (let i = 0; i < DEPTH; i++) await stack.devnet.provider.send('evm_mine', []);
  await until(async () => (await finalityOf(honest))?.status === 'final');
  expect(await finalityOf(honest)).toEqual({ status: 'final', reorgs: 1 });
  expect(await finalityOf(cheated)).toEqual({ status: 'changed', reorgs: 1 });
  // no second event for either settlement
  expect(reorgedEvents()).toHaveLength(1);
  // on the chain as it is now: one fee and one payment, the honest payer's
  expect(await transfersOnChain(stack.devnet, start, merchant.address, treasury.address)).toBe(1);
  expect(await transfersOnChain(stack.devnet, start, payer.address, merchant.address)).toBe(1);
}, 90_000);


it("a Permit2 payment someone else executes while its batch is out of the chain: judged through its mechanism, the merchant was paid (by their transaction, with no fee)", async () => {
  const { merchant, treasury, deployer } = stack.devnet.accounts;
  const price = 50_000n;
  const payer = Wallet.createRandom();
  await stack.devnet.mint(payer.address, price);
  await approvePermit2(stack.devnet, payer.privateKey);
  // the funding and approval stay below the blocks the reorg takes
  for (let i = 0; i < DEPTH; i++) await stack.devnet.provider.send('evm_mine', []);
  const start = (await stack.devnet.provider.getBlockNumber()) + 1;
  const body = await permit2Request(stack.devnet, { payerKey: payer.privateKey, to: merchant.address, value: price });
  const settled = await stack.http.post('/x402/settle').send(body);
  expect(settled.body).toMatchObject({ success: true });
  const id = settled.headers['x-settlement-id'] as string;
  const [item] = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: id } });
  const [tx] = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: item.batchId } });
  expect(tx.purpose).toBe('settle');

  // the worker is away while the chain reorganises; a stranger sends the payer's permit to x402's exact proxy
  // itself (as anyone holding the payload may), and it is mined first
  await stack.killWorkers();
  await stack.devnet.provider.send('anvil_reorg', [DEPTH, []]);
  expect(await stack.devnet.provider.getTransactionReceipt(tx.minedHash!)).toBeNull();
  const { permit2Authorization: permit, signature } = body.paymentPayload.payload;
  const proxy = new Contract(X402_EXACT_PERMIT2_PROXY, [
    'function settle(((address token, uint256 amount) permitted, uint256 nonce, uint256 deadline) permit, address owner, (address to, uint256 validAfter) witness, bytes signature)',
  ]);
  const data = proxy.interface.encodeFunctionData('settle', [{ permitted: permit.permitted, nonce: permit.nonce, deadline: permit.deadline }, permit.from, permit.witness, signature]);
  const stranger = new Wallet(deployer.privateKey, stack.devnet.provider);
  const theirs = await stranger.sendTransaction({ to: X402_EXACT_PERMIT2_PROXY, data, gasLimit: 300_000n, maxPriorityFeePerGas: parseUnits('50', 'gwei'), maxFeePerGas: parseUnits('100', 'gwei') });
  expect((await theirs.wait())?.status).toBe(1);
  await stack.startWorker();

  // our batch is sent again and succeeds; its item fails inside it (the nonce is spent): the fee is not
  // collected, and the merchant was paid, by the stranger's transaction
  await until(async () => (await stack.devnet.provider.getTransactionReceipt(tx.minedHash!))?.status === 1, 30_000);
  await until(async () => (await finalityOf(id))?.status === 'changed', 30_000);
  expect(await finalityOf(id)).toEqual({ status: 'changed', reorgs: 1 });
  const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id } });
  expect(row.merchantPaid).toBe(true);
  const notes = JSON.stringify(await stack.db.prisma.settlementTransition.findMany({ where: { settlementId: id }, select: { note: true } }));
  expect(notes).toContain(`"paid_by_tx":"${theirs.hash}"`);

  // on the chain as it is now: the stranger's payment, no fee
  expect(await transfersOnChain(stack.devnet, start, payer.address, merchant.address)).toBe(1);
  expect(await transfersOnChain(stack.devnet, start, merchant.address, treasury.address)).toBe(0);
}, 90_000);
