// Reorgs after `settled` (issue 15), with anvil_reorg, which removes the last blocks' transactions (their
// nonces are free again). The worker watches each settled transaction until FINALITY_DEPTH blocks deep:
// one that disappears is broadcast again from its stored signed form, the settlement's history records the
// reorg and the re-inclusion, and when the chain's outcome then differs from what was reported, the status
// record says `changed` and the merchant gets a settlement.reorged event.
import { Wallet } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { transfersOnChain } from './support/chain-actions';
import { startTestStack, type TestStack } from './support/test-stack';
import { WebhookReceiver } from './support/webhook-receiver';

const DEPTH = 3;
let stack: TestStack;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  // short locks: a SIGKILLed worker's maintenance job is taken back within seconds, not 15 s
  stack = await startTestStack({
    env: { FINALITY_DEPTH_84532: String(DEPTH), FINALITY_POLL_MS: '300', WORKER_LOCK_DURATION_MS: '2000', WORKER_STALLED_INTERVAL_MS: '1000' },
  });
  await stack.startWorker();
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
});

async function settle(webhookUrl?: string): Promise<string> {
  const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB(webhookUrl ? { webhook_url: webhookUrl } : {}));
  expect(v.status).toBe(200);
  const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  expect(s.status).toBe(200);
  return s.body.settlement_id as string;
}

async function recordUntil(id: string, done: (record: { status: string; finality: { status: string; reorgs: number } | null }) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = (await stack.http.get(`/v1/settlements/${id}`)).body;
    if (done(record) || Date.now() > deadline) return record;
    await sleep(100);
  }
}

async function mine(blocks: number): Promise<void> {
  for (let i = 0; i < blocks; i++) await stack.devnet.provider.send('evm_mine', []);
}

async function notesOf(id: string): Promise<Array<Record<string, unknown>>> {
  const rows = await stack.db.prisma.settlementTransition.findMany({ where: { settlementId: id, fromState: 'settled', toState: 'settled' }, orderBy: { id: 'asc' } });
  return rows.map((r) => r.note as Record<string, unknown>);
}

it('a settled fee and transfer removed by a reorg of depth 3 are mined again, once each, recorded, then final', async () => {
  const { merchant, payer, treasury } = stack.devnet.accounts;
  // empty blocks first: the reorg must take our two transactions and nothing of the devnet's set-up
  await mine(DEPTH);
  const start = (await stack.devnet.provider.getBlockNumber()) + 1;
  const id = await settle();
  expect(await recordUntil(id, (r) => r.status === 'settled')).toMatchObject({ status: 'settled', finality: { status: 'watching', reorgs: 0 } });
  const minedBefore = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: id }, orderBy: { purpose: 'asc' } });
  expect(minedBefore.map((t) => [t.purpose, t.status])).toEqual([['fee', 'confirmed'], ['transfer', 'confirmed']]);

  await stack.devnet.provider.send('anvil_reorg', [DEPTH, []]);
  expect(await stack.devnet.provider.getTransactionReceipt(minedBefore[1].minedHash!)).toBeNull();
  // the watcher finds both gone, sends them again (automine mines them), and notes both
  const reincluded = await recordUntil(id, (r) => r.finality?.reorgs === 2);
  expect(reincluded).toMatchObject({ status: 'settled', finality: { status: 'reorged', reorgs: 2 } });
  for (const tx of minedBefore) {
    for (let i = 0; i < 100 && !(await stack.devnet.provider.getTransactionReceipt(tx.minedHash!)); i++) await sleep(100);
    expect((await stack.devnet.provider.getTransactionReceipt(tx.minedHash!))?.status).toBe(1);
  }
  await mine(DEPTH);
  expect(await recordUntil(id, (r) => r.finality?.status === 'final')).toMatchObject({ status: 'settled', finality: { status: 'final', reorgs: 2 } });

  const notes = await notesOf(id);
  expect(notes.filter((n) => n.reorg).map((n) => (n.reorg as { purpose: string }).purpose).sort()).toEqual(['fee', 'transfer']);
  expect(notes.filter((n) => n.reincluded).map((n) => (n.reincluded as { purpose: string }).purpose).sort()).toEqual(['fee', 'transfer']);
  // one fee and one transfer on the chain as it is now: nothing sent twice
  expect(await transfersOnChain(stack.devnet, start, merchant.address, treasury.address)).toBe(1);
  expect(await transfersOnChain(stack.devnet, start, payer.address, merchant.address)).toBe(1);
  expect((await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: id } })).every((t) => t.finalAt !== null && t.reorgCount === 1)).toBe(true);
}, 60_000);

it('when the transfer reverts once mined again (the payer emptied its wallet meanwhile): changed, and the merchant is told', async () => {
  const url = receiver.endpoint('reorg-changed');
  await mine(DEPTH);
  const id = await settle(url);
  expect(await recordUntil(id, (r) => r.status === 'settled')).toMatchObject({ status: 'settled' });
  await receiver.waitFor('reorg-changed', 2);
  // the worker is away while the chain reorganises and the payer moves its money out
  await stack.killWorkers();
  await stack.devnet.provider.send('anvil_reorg', [DEPTH, []]);
  const payer = new Wallet(stack.devnet.accounts.payer.privateKey, stack.devnet.provider);
  await stack.devnet.setEthBalance(payer.address, 10n ** 18n);
  const balance = await stack.devnet.balanceOf(payer.address);
  const usdc = stack.devnet.usdc.connect(payer) as unknown as { transfer(to: string, amount: bigint): Promise<{ wait(): Promise<unknown> }> };
  await (await usdc.transfer(stack.devnet.accounts.treasury.address, balance)).wait();
  await stack.startWorker();

  const record = await recordUntil(id, (r) => r.finality?.status === 'changed', 30_000);
  expect(record).toMatchObject({ status: 'settled', finality: { status: 'changed' } });
  const [event] = (await receiver.waitFor('reorg-changed', 3)).slice(2);
  expect(event.body).toMatchObject({
    event_type: 'settlement.reorged',
    settlement_id: id,
    status: 'changed',
    data: { state: 'settled', merchant_paid: false, fee_collected: true, change: { purpose: 'transfer', reported: 'confirmed', now: 'reverted' } },
  });
  expect((await notesOf(id)).some((n) => n.outcome_changed)).toBe(true);
  // give the payer back what the next tests expect
  await stack.devnet.mint(stack.devnet.accounts.payer.address, balance);
}, 90_000);
