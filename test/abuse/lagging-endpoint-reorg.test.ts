// Issue 22, low: "a lagging RPC endpoint can produce a false reorg and a permanent `finality: changed`".
// The reorg watcher reads through the network's endpoint pool; when the endpoint it prefers lags a few
// blocks behind, the blocks of freshly settled transactions (and their receipts) do not exist there yet.
// That must be waited for, never taken for a reorg, let alone for a lost transaction.
import { FailoverJsonRpcProvider, RpcEndpointPool, UsdcClient } from '@facilitator/evm-chain';
import { ChainTransactionRepository, createPgPool, SettlementBatchRepository, SettlementFinalityStore } from '@facilitator/db';
import { createSilentLogger } from '@facilitator/logging';
import { FinalityWatcher } from '@facilitator/settlement';
import { WebhookEventMac, webhookEventRow } from '@facilitator/webhooks';
import { finalityChain } from '../../apps/worker/src/finality-chain';
import { startJsonRpcProxy, type JsonRpcProxy } from '../support/json-rpc-proxy';
import { startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';
import { setTimeout as sleep } from 'node:timers/promises';

const LAG = 5;
const DEPTH = 3;
const PAYMENTS = 3;
let stack: TestStack;
let lagging: JsonRpcProxy;

beforeAll(async () => {
  // the stack's own worker settles; it never declares anything final (its depth is far away)
  stack = await startTestStack({ env: { FINALITY_DEPTH_84532: '1000' } });
  await stack.startWorker();
  lagging = await startJsonRpcProxy(stack.devnet.rpcUrl);
}, 60_000);
afterAll(async () => {
  await lagging?.close();
  await stack?.stop();
});

async function settle(): Promise<string> {
  const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
  expect(v.status).toBe(200);
  const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  expect(s.status).toBe(200);
  const id = s.body.settlement_id as string;
  for (let i = 0; i < 200; i++) {
    const row = await stack.db.prisma.settlement.findUnique({ where: { id } });
    if (row?.state === 'settled') return id;
    await sleep(50);
  }
  throw new Error(`settlement ${id} did not settle`);
}

it('an endpoint lagging 5 blocks makes no false reorg, no lost transaction, no finality "changed"', async () => {
  const report = abuseReport(
    'lagging-endpoint-reorg',
    'Lagging RPC endpoint and the reorg watcher',
    `the preferred of two RPC endpoints answers as a node ${LAG} blocks behind (no blocks, receipts or nonces past its head) while the watcher checks freshly settled transactions`,
  );
  const ids: string[] = [];
  for (let i = 0; i < PAYMENTS; i++) ids.push(await settle());
  await stack.killWorkers();

  const chainId = stack.devnet.chainId;
  const rpcPool = new RpcEndpointPool(chainId, [lagging.url, stack.devnet.rpcUrl]);
  const provider = new FailoverJsonRpcProvider(rpcPool);
  const pgPool = createPgPool(stack.db.url, 4);
  const watcher = new FinalityWatcher({
    transactions: new ChainTransactionRepository(pgPool),
    settlements: new SettlementFinalityStore(stack.db.prisma, pgPool),
    batches: new SettlementBatchRepository(pgPool),
    outbox: { enqueue: async () => undefined, row: (event) => webhookEventRow(event, new WebhookEventMac(stack.env.WEBHOOK_SECRET)) },
    chain: finalityChain(new Map([[chainId, provider]]), new Map([[chainId, new UsdcClient(provider, stack.devnet.token)]])),
    treasury: stack.devnet.accounts.treasury.address,
    depths: new Map([[chainId, DEPTH]]),
    logger: createSilentLogger(),
  });
  const watched = await stack.db.prisma.chainTransaction.count({ where: { chainId, status: 'confirmed', finalAt: null } });
  let reorged = 0;
  let changed = 0;
  try {
    lagging.lagBlocks = LAG;
    // the lagging endpoint sees none of the settled transactions' blocks yet: several runs, a block apart
    for (let i = 0; i < LAG; i++) {
      const run = await watcher.run();
      reorged += run.reorged;
      changed += run.changed;
      await stack.devnet.provider.send('evm_mine', []);
    }
    // then it catches up, and the transactions become final as usual
    lagging.lagBlocks = 0;
    for (let i = 0; i < DEPTH + 1; i++) await stack.devnet.provider.send('evm_mine', []);
    const last = await watcher.run();
    reorged += last.reorged;
    changed += last.changed;
  } finally {
    provider.destroy();
    await pgPool.end();
  }
  const rows = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: { in: ids } } });
  const settlements = await stack.db.prisma.settlement.findMany({ where: { id: { in: ids } } });
  const reorgCount = rows.reduce((a, r) => a + r.reorgCount, 0);
  const lost = rows.filter((r) => r.status === 'replaced').length; // markLost
  const finalRows = rows.filter((r) => r.finalAt !== null).length;
  const finalities = settlements.map((s) => s.finality ?? 'none');
  const checks = [
    report.check('false reorgs counted by the watcher', 0, reorged),
    report.check('transactions marked reorged (reorg_count)', 0, reorgCount),
    report.check('transactions marked lost (replaced)', 0, lost),
    report.check('settlements whose finality says changed', 0, changed),
    report.check('transactions final once the endpoint caught up', `${watched}/${watched}`, `${finalRows}/${rows.length}`),
    report.check('settlements final', `${PAYMENTS}/${PAYMENTS}`, `${finalities.filter((f) => f === 'final').length}/${PAYMENTS}`),
  ];
  report.note(`watched ${watched} mined transactions (fees and transfers) of ${PAYMENTS} settlements; endpoint 1 lagged ${LAG} blocks for ${LAG} runs`);
  report.save();
  expect(reorged).toBe(0);
  expect(reorgCount).toBe(0);
  expect(lost).toBe(0);
  expect(changed).toBe(0);
  expect(watched).toBe(rows.length);
  expect(finalRows).toBe(rows.length);
  expect(finalities).toEqual(ids.map(() => 'final'));
  expect(checks.every(Boolean)).toBe(true);
});
