// Scenario: the chain drops our transactions from its mempool (anvil_dropTransaction) before mining them.
// Atomic path, worker without the treasury key: each batch of settlements is one `settle` transaction of the
// treasury's executor (its chain_transactions row keyed by the batch id), and every signed version of it is
// dropped once, as soon as the node has it. The worker must hand it to the node again (the same signed
// transaction, or a fee-bumped replacement) until it is mined, and every settlement must end settled, once.
//
// The test mines the 2 s blocks itself, each right after a look at the pool: with anvil mining on its own
// timer, a transaction that reached the pool a few ms before a block was mined before the test could see it
// (a flake on a loaded machine), and that batch tested nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestStack, TestStack } from '../support/test-stack';
import { checkLedger, ledgerStart, startSettlement, summarizeWarnings, verifyMany, waitAllFinal } from './flows';
import { ScenarioReport } from './scenario-report';

const BURSTS = 3;
const PER_BURST = 2;
const COUNT = BURSTS * PER_BURST;
const BURST_GAP_MS = 3_000;
const BLOCK_MS = 2_000;
const ATOMIC = { SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '300' };
const report = new ScenarioReport(
  '5-dropped-transaction',
  'The chain drops a transaction',
  `every signed settle transaction of ${COUNT} settlements (${BURSTS} bursts of ${PER_BURST}, ${BURST_GAP_MS / 1000} s apart; atomic path, BATCH_WINDOW_MS=300, no treasury key in the worker) removed from the mempool (anvil_dropTransaction) as soon as the node has it, ${BLOCK_MS / 1000} s blocks mined by the test right after it looked at the pool`,
);
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ executor: true });
});
afterAll(async () => {
  await stack?.stop();
  // last: it throws when a check failed, after the clean-up
  report.save();
});

/** One JSON-RPC call to anvil itself: not through ethers, whose provider holds each call back to batch it. */
async function anvil<T>(method: string, params: unknown[]): Promise<T> {
  const res = await fetch(stack.devnet.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** The hashes of every transaction in the node's pool, pending or queued behind a nonce gap. */
async function poolHashes(): Promise<string[]> {
  type Pool = Record<string, Record<string, { hash: string }>>;
  const pool = await anvil<{ pending: Pool; queued: Pool }>('txpool_content', []);
  return [pool.pending, pool.queued].flatMap((byAccount) => Object.values(byAccount).flatMap((byNonce) => Object.values(byNonce).map((tx) => tx.hash.toLowerCase())));
}

it('the worker notices dropped settle transactions and sends them again', async () => {
  const worker = await stack.startWorker(ATOMIC, { treasuryKey: false });
  const verificationIds = await verifyMany(stack, COUNT);
  const ledger = await ledgerStart(stack);
  // from here on a block is mined only by the loop below
  await anvil('evm_setAutomine', [false]);
  const settlementIds: string[] = [];
  let streaming = true;
  const stream = (async () => {
    try {
      for (let burst = 0; burst < BURSTS; burst++) {
        if (burst > 0) await sleep(BURST_GAP_MS);
        const ids = verificationIds.slice(burst * PER_BURST, (burst + 1) * PER_BURST);
        settlementIds.push(...(await Promise.all(ids.map((id) => startSettlement(stack, id)))));
      }
    } finally {
      streaming = false;
    }
  })();

  // the node's pool is read directly, every few ms: a transaction is dropped the first time it is seen there,
  // and the worker's own rebroadcast of that same signed transaction is then left to be mined. A block is
  // mined only right after a look that dropped nothing new, so that only a transaction that arrived in the
  // last few ms can be mined unseen; those are counted, and none is expected
  const dropped = new Set<string>();
  let open = COUNT;
  let openReadAt = 0;
  let nextBlockAt = Date.now() + BLOCK_MS;
  let minedUnseen = 0;
  const dropNew = async (): Promise<number> => {
    let fresh = 0;
    for (const hash of await poolHashes()) {
      if (!dropped.has(hash) && (await anvil<string | null>('anvil_dropTransaction', [hash])) !== null) {
        dropped.add(hash);
        fresh += 1;
      }
    }
    return fresh;
  };
  for (const deadline = Date.now() + 60_000; Date.now() < deadline && (streaming || open > 0); await sleep(5)) {
    const fresh = await dropNew();
    if (fresh === 0 && Date.now() >= nextBlockAt) {
      // only what was seen (and dropped once) before may be mined: anything new waits for the next look
      const inPool = await poolHashes();
      if (inPool.every((hash) => dropped.has(hash))) {
        await anvil('evm_mine', []);
        const block = await anvil<{ transactions: string[] }>('eth_getBlockByNumber', ['latest', false]);
        minedUnseen += block.transactions.filter((hash) => !inPool.includes(hash.toLowerCase())).length;
        nextBlockAt = Date.now() + BLOCK_MS;
      }
    }
    if (!streaming && Date.now() - openReadAt > 250) {
      open = await stack.db.prisma.settlement.count({ where: { id: { in: settlementIds }, state: { notIn: ['settled', 'failed'] } } });
      openReadAt = Date.now();
    }
  }
  await stream;
  // the confirmations of the last blocks
  await anvil('evm_setIntervalMining', [1]);
  open = await waitAllFinal(stack, settlementIds, 90_000);

  // what was dropped: every hash must be a signed version of one of these settlements' settle transactions
  const items = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: { in: settlementIds } }, select: { batchId: true } });
  const batchIds = [...new Set(items.map((i) => i.batchId))];
  const droppedAttempts = await stack.db.prisma.chainTransactionAttempt.findMany({
    where: { hash: { in: [...dropped] } },
    select: { transaction: { select: { settlementId: true, purpose: true } } },
  });
  const ofTheseBatches = droppedAttempts.filter((a) => a.transaction.purpose === 'settle' && batchIds.includes(a.transaction.settlementId));
  const batchesHit = new Set(ofTheseBatches.map((a) => a.transaction.settlementId)).size;
  const settleTxs = await stack.db.prisma.chainTransaction.findMany({ where: { settlementId: { in: batchIds }, purpose: 'settle' }, select: { minedHash: true, _count: { select: { attempts: true } } } });
  const minedAsDropped = settleTxs.filter((t) => t.minedHash && dropped.has(t.minedHash.toLowerCase())).length;
  report.note(`${dropped.size} transactions removed from the mempool; ${batchIds.length} batches of ${items.length} settlements; signed versions per settle transaction: ${settleTxs.map((t) => t._count.attempts).join(', ')}; ${minedAsDropped} mined as the worker's rebroadcast of a dropped version, ${settleTxs.length - minedAsDropped} as a later version`);
  report.note(`worker warnings and errors: ${summarizeWarnings(worker.lines)}`);
  report.note(`transactions mined in a block without having been in the pool when the test last looked: ${minedUnseen}`);

  const results = [
    report.assert('batches formed (one settle transaction each)', `at least ${BURSTS}, one per burst`, batchIds.length, batchIds.length >= BURSTS),
    report.check('batches whose settle transaction was removed from the mempool before mining', batchIds.length, batchesHit),
    report.check('removed transactions that were not a settle transaction of these batches', 0, dropped.size - ofTheseBatches.length),
    report.check('settlements still open at the end', 0, open),
    await checkLedger(report, stack, { settlementIds, verificationIds, ...ledger, atomic: true }),
  ];
  expect(results.every(Boolean)).toBe(true);
}, 180_000);
