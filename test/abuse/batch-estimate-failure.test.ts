// Attack (issue 22, 4): a batch whose estimate fails. Before, the batch was stored first and estimated when
// sent: an estimate that failed (or came out above the cap) left every item of the stored batch to be
// retried and parked for an operator, each still holding its merchant's fee reservation. Now each batch is
// estimated before it is stored; when that fails, the items are estimated alone, the ones that fail alone
// are refused (failed, released, nothing charged) and the rest are formed again and sent.
//
// With contract-wallet items in transactions of their own and calldata counted in the envelopes, items'
// content no longer makes a shared batch's estimate fail on anvil; the node is made to answer as if it did:
// an HTTP JSON-RPC proxy in front of anvil fails `eth_estimateGas` of any settle transaction (to the
// treasury) carrying one of the marked payments, and forwards everything else.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { AbiCoder } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestStack, type TestStack } from '../support/test-stack';
import { abuseReport } from './abuse-report';

const HONEST = 6;
const MARKED = 2;
const MARK = 'dead5e77'.repeat(2);
let stack: TestStack;
let proxy: Server;
let poisoned = 0;

/** anvil behind a proxy that makes the settle estimates of marked payments revert */
async function startEstimateProxy(target: string, treasury: string): Promise<string> {
  const revert = (id: unknown) => ({
    jsonrpc: '2.0',
    id,
    error: { code: 3, message: 'execution reverted: hostile item', data: '0x08c379a0' + AbiCoder.defaultAbiCoder().encode(['string'], ['hostile item']).slice(2) },
  });
  const isPoisoned = (call: { method?: string; params?: Array<{ to?: string; data?: string }> }) =>
    call.method === 'eth_estimateGas' && call.params?.[0]?.to?.toLowerCase() === treasury && (call.params[0].data ?? '').toLowerCase().includes(MARK);
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const calls = Array.isArray(body) ? body : [body];
    const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answered = await upstream.json();
    const answers = Array.isArray(answered) ? answered : [answered];
    const out = answers.map((answer: { id: unknown }) => {
      const call = calls.find((c: { id: unknown }) => c.id === answer.id);
      if (!call || !isPoisoned(call)) return answer;
      poisoned++;
      return revert(answer.id);
    });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(Array.isArray(answered) ? out : out[0]));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}

beforeAll(async () => {
  stack = await startTestStack({ executor: true, env: { SETTLEMENT_MODE: 'atomic', BATCH_WINDOW_MS: '1500' } });
  const url = await startEstimateProxy(stack.devnet.rpcUrl, stack.devnet.accounts.treasury.address.toLowerCase());
  const worker = await stack.startWorker({ RPC_URL_84532: url });
  for (let i = 0; i < 600 && !worker.lines.some((l) => l.includes('settlements are atomic')); i++) await sleep(50);
}, 60_000);
afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => proxy?.close(resolve));
});

it('estimate failure: the batch is re-formed without the failing items, honest items settled, none parked', async () => {
  const report = abuseReport(
    'batch-estimate-failure',
    'A batch whose gas estimate fails',
    `${HONEST} honest payments and ${MARKED} whose settle estimate the node fails, all ready in one batch window (atomic path, BATCH_WINDOW_MS=1500)`,
  );
  const merchant = stack.devnet.accounts.merchant.address;
  const honestIds: string[] = [];
  const markedIds: string[] = [];
  for (let i = 0; i < HONEST + MARKED; i++) {
    const marked = i % 4 === 1 && markedIds.length < MARKED;
    const nonce = marked ? '0x' + MARK + randomBytes(24).toString('hex') : undefined;
    const v = await stack.http.post('/v1/verify').send((await stack.payment({ nonce })).formB());
    expect(v.status).toBe(200);
    (marked ? markedIds : honestIds).push(v.body.verification_id);
  }
  const treasury = stack.devnet.accounts.treasury.address;
  const feesBefore = await stack.devnet.balanceOf(treasury);
  await Promise.all([...honestIds, ...markedIds].map((id) => stack.http.post('/v1/settle').send({ verification_id: id, destination_address: merchant }).then((r) => r)));

  const all = [...honestIds, ...markedIds];
  let rows = await stack.db.prisma.settlement.findMany({ where: { verificationId: { in: all } } });
  for (let i = 0; i < 600 && (rows.length < all.length || rows.some((r) => r.state !== 'settled' && r.state !== 'failed' && !r.attentionAt)); i++) {
    await sleep(50);
    rows = await stack.db.prisma.settlement.findMany({ where: { verificationId: { in: all } } });
  }
  const honest = rows.filter((r) => honestIds.includes(r.verificationId));
  const marked = rows.filter((r) => markedIds.includes(r.verificationId));
  const items = await stack.db.prisma.settlementBatchItem.findMany({ where: { settlementId: { in: rows.map((r) => r.id) } }, include: { batch: true } });
  const honestBatches = new Set(items.filter((i) => honest.some((r) => r.id === i.settlementId)).map((i) => i.batchId));
  const markedStored = items.filter((i) => marked.some((r) => r.id === i.settlementId)).length;
  const feesCollected = (await stack.devnet.balanceOf(treasury)) - feesBefore;
  const refusedReason = (marked[0]?.errorDetails as { reason?: string } | null)?.reason;

  const checks = [
    report.assert('settle estimates the node failed (the batch, then each marked item alone)', `at least ${MARKED + 1}`, poisoned, poisoned >= MARKED + 1),
    report.check('honest items settled', `${HONEST}/${HONEST}`, `${honest.filter((r) => r.state === 'settled').length}/${HONEST}`),
    report.check('transactions the honest items were settled in (re-formed together)', 1, honestBatches.size),
    report.check('failing items refused: failed, released, nothing charged', MARKED, marked.filter((r) => r.state === 'failed' && r.paymentKey === null && (r.errorDetails as { fee_status?: string }).fee_status === 'not_collected').length),
    report.check('failing items stored in a batch', 0, markedStored),
    report.check('reason given to a refused item', 'the settle transaction would revert: hostile item', refusedReason),
    report.check('fees collected (the honest items only)', String(BigInt(HONEST) * stack.config.feeAmount), String(feesCollected)),
    report.check('settlements parked for an operator', 0, rows.filter((r) => r.attentionAt).length),
  ];
  report.save();
  expect(checks.every(Boolean)).toBe(true);
  expect(rows.filter((r) => r.attentionAt)).toHaveLength(0);
}, 120_000);
