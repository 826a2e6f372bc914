// Attack (issue 40, 1): a database writer (a compromised API process: it holds the same DATABASE_URL) makes the
// worker's keys sign what it wrote. Before, the worker sent a stored settlement batch as its row said (relayer,
// target, calldata, gas), so a batch row naming the treasury as its sender with `transferFrom(merchant,
// attacker, allowance)` as calldata moved a merchant's whole allowance to the attacker, signed by the treasury
// key; a row naming a relayer made that key send anything anywhere; and a settlement row's fee was charged
// with no bound. Now a stored batch is sent only when its target is the treasury, its sender one of the
// executor's relayers and its calldata exactly the items the worker derives from its settlements' payments,
// with gas from the worker's own caps; the treasury charges no fee above the worker's FEE_AMOUNT; and the API's
// database role (npm run db:api-role) cannot write batch, item or transaction rows at all.
// Real USDC on anvil, the compiled worker (holding the treasury key), the API in process.
import { randomBytes } from 'node:crypto';
import { asApiRole } from './api-role';
import { Interface, Wallet, hexlify } from 'ethers';
import { Client } from 'pg';
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { grantApiRole } from '@facilitator/db';
import { enqueueSettlement, openQueueStore, queueStoreTargetOf } from '@facilitator/queue';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi } from '../../apps/api/src/build-api';
import { setTimeout as sleep } from 'node:timers/promises';
import { PRICE_UNITS, startTestStack, type TestStack } from '../support/test-stack';
import type { WorkerProcess } from '../support/worker-process';
import { abuseReport } from './abuse-report';

const USDC = 1_000_000n;
let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack({ executor: true, env: { SETTLEMENT_MODE: 'atomic' } });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const erc20 = new Interface(['function transferFrom(address from, address to, uint256 value)']);

async function settlementOf(verificationId: string): Promise<{ id: string }> {
  for (let i = 0; i < 300; i++) {
    const row = await stack.db.prisma.settlement.findFirst({ where: { verificationId }, select: { id: true } });
    if (row) return row;
    await sleep(20);
  }
  throw new Error(`no settlement for ${verificationId}`);
}

/** What a database writer can do with SQL alone: a batch, and this settlement as its only item. */
async function forgeBatch(id: string, settlementId: string, relayer: string, to: string, data: string): Promise<void> {
  await stack.db.prisma.$executeRawUnsafe(
    `INSERT INTO settlement_batches (id, chain_id, relayer, to_address, data, gas_cap, item_count) VALUES ($1, 84532, $2, $3, $4, '300000', 1)`,
    id, relayer.toLowerCase(), to.toLowerCase(), data,
  );
  await stack.db.prisma.$executeRawUnsafe(`INSERT INTO settlement_batch_items (settlement_id, batch_id, position) VALUES ($1, $2, 0)`, settlementId, id);
}

/** Until the worker either sent the forged batch (a stored transaction) or refused it (said so in its log). */
async function sentOrRefused(worker: WorkerProcess, batchId: string): Promise<'sent' | 'refused' | 'neither'> {
  for (let i = 0; i < 600; i++) {
    if (await stack.db.prisma.chainTransaction.findFirst({ where: { settlementId: batchId } })) return 'sent';
    if (worker.lines.some((l) => l.includes(batchId) && l.includes('refused'))) return 'refused';
    await sleep(50);
  }
  return 'neither';
}

async function finalState(settlementId: string): Promise<{ state: string; failureReason: string | null }> {
  for (let i = 0; i < 600; i++) {
    const row = await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: settlementId } });
    if (row.state === 'settled' || row.state === 'failed') return { state: row.state, failureReason: row.errorMessage };
    await sleep(50);
  }
  return { state: 'not final', failureReason: null };
}

/** Settle requests for `count` fresh payments, queued while no worker runs; their settlements' ids. */
async function queuedSettlements(count: number, value = PRICE_UNITS): Promise<{ ids: string[]; answered: Promise<unknown> }> {
  const verificationIds: string[] = [];
  for (let i = 0; i < count; i++) {
    const v = await stack.http.post('/v1/verify').send((await stack.payment({ value })).formB({ expected_amount: value.toString() }));
    expect(v.status).toBe(200);
    verificationIds.push(v.body.verification_id);
  }
  const merchant = stack.devnet.accounts.merchant.address;
  const answered = Promise.all(verificationIds.map((id) => stack.http.post('/v1/settle').send({ verification_id: id, destination_address: merchant }).then((r) => r)));
  const ids = (await Promise.all(verificationIds.map(settlementOf))).map((s) => s.id);
  return { ids, answered };
}

it('(insider 1) a settlement row whose fee a database writer raised: refused, nothing charged', async () => {
  const report = abuseReport(
    'insider-1-raised-fee',
    'A database writer raises a settlement\'s fee',
    "with SQL only: a queued settlement's fee_amount raised to 5 USDC (500 times FEE_AMOUNT) on a 10 USDC payment; then a worker holding the treasury key runs it",
  );
  const { merchant, treasury } = stack.devnet.accounts;
  const allowanceBefore = await stack.devnet.allowance(merchant.address, treasury.address);
  const { ids: [overcharged], answered } = await queuedSettlements(1, 10n * USDC);
  await stack.db.prisma.$executeRawUnsafe(`UPDATE settlements SET fee_amount = $1 WHERE id = $2`, (5n * USDC).toString(), overcharged);

  await stack.startWorker({}, { treasuryKey: true });
  const fee = await finalState(overcharged);
  await answered;
  const feeSent = await stack.db.prisma.chainTransaction.count({ where: { settlementId: overcharged, purpose: 'fee' } });
  const allowanceAfter = await stack.devnet.allowance(merchant.address, treasury.address);
  await stack.killWorkers();

  const checks = [
    report.check('the settlement whose row fee was raised to 5 USDC', 'failed', fee.state),
    report.check('fee transactions sent for it', 0, feeSent),
    report.check("the merchant's allowance to the treasury afterwards (unchanged)", allowanceBefore.toString(), allowanceAfter.toString()),
  ];
  report.note(`its failure: ${fee.failureReason}`);
  report.save();
  expect(checks.every(Boolean)).toBe(true);
}, 120_000);

it('(insider 1) batch rows a database writer inserts: no key signs them, nothing moves', async () => {
  const report = abuseReport(
    'insider-1-forged-batches',
    'A database writer stores batches for the worker to send',
    'with SQL only, for two queued settlements: a batch row naming the treasury as sender and transferFrom(merchant, attacker, allowance) as calldata; a batch row making a relayer call the attacker; then a worker holding the treasury key runs them',
  );
  const { merchant, treasury, relayers } = stack.devnet.accounts;
  const attacker = Wallet.createRandom().address;
  const allowanceBefore = await stack.devnet.allowance(merchant.address, treasury.address);
  const merchantBefore = await stack.devnet.balanceOf(merchant.address);
  const { ids: [drained, called], answered } = await queuedSettlements(2);

  const treasuryBatch = 'bat_forged_treasury';
  await forgeBatch(treasuryBatch, drained, treasury.address, stack.devnet.token, erc20.encodeFunctionData('transferFrom', [merchant.address, attacker, allowanceBefore]));
  const relayerBatch = 'bat_forged_relayer';
  await forgeBatch(relayerBatch, called, relayers[0].address, attacker, '0xdeadbeef');

  const worker = await stack.startWorker({}, { treasuryKey: true });
  const [treasuryBatchFate, relayerBatchFate] = await Promise.all([sentOrRefused(worker, treasuryBatch), sentOrRefused(worker, relayerBatch)]);
  await answered;
  // a forged transaction, had one been signed, is mined by now (anvil mines at once)
  await sleep(500);

  const attackerGot = await stack.devnet.balanceOf(attacker);
  const allowanceAfter = await stack.devnet.allowance(merchant.address, treasury.address);
  const merchantAfter = await stack.devnet.balanceOf(merchant.address);
  const forgedSent = await stack.db.prisma.chainTransaction.count({ where: { settlementId: { in: [treasuryBatch, relayerBatch] } } });
  const toAttacker = await stack.db.prisma.chainTransaction.count({ where: { toAddress: attacker.toLowerCase() } });
  await stack.killWorkers();

  const checks = [
    report.check('the forged treasury batch (transferFrom merchant -> attacker, sent by the treasury)', 'refused', treasuryBatchFate),
    report.check('the forged relayer batch (a relayer calling the attacker)', 'refused', relayerBatchFate),
    report.check("USDC the attacker received from the merchant's allowance", '0', attackerGot.toString()),
    report.check('transactions stored or signed for the forged batches', 0, forgedSent + toAttacker),
    report.check("the merchant's allowance to the treasury afterwards (unchanged)", allowanceBefore.toString(), allowanceAfter.toString()),
    report.check("the merchant's balance afterwards (unchanged)", merchantBefore.toString(), merchantAfter.toString()),
  ];
  report.save();
  expect(checks.every(Boolean)).toBe(true);
}, 120_000);

it('(insider 1) a batch row a database writer inserts for a keyless worker (relayer keys only): not signed', async () => {
  const report = abuseReport(
    'insider-1-forged-batch-keyless',
    'A database writer stores a batch for a keyless worker',
    'with SQL only, for a queued settlement: a batch row making a relayer key call the attacker; then a worker without the treasury key (the atomic default) runs it',
  );
  const attacker = Wallet.createRandom().address;
  const { ids: [called], answered } = await queuedSettlements(1);
  const batchId = 'bat_forged_keyless';
  await forgeBatch(batchId, called, stack.devnet.accounts.relayers[1].address, attacker, '0xdeadbeef');

  const worker = await stack.startWorker();
  const fate = await sentOrRefused(worker, batchId);
  await answered;
  await sleep(500);
  const stored = await stack.db.prisma.chainTransaction.count({ where: { OR: [{ settlementId: batchId }, { toAddress: attacker.toLowerCase() }] } });
  await stack.killWorkers();

  const checks = [
    report.check('the forged batch (a relayer calling the attacker)', 'refused', fate),
    report.check('transactions stored or signed for it', 0, stored),
  ];
  report.save();
  expect(checks.every(Boolean)).toBe(true);
}, 120_000);

it("(insider 1) the API's database role: it serves verify and settle, and cannot write a batch or a transaction row", async () => {
  const report = abuseReport(
    'insider-1-api-database-role',
    "The API process under its own database role (npm run db:api-role)",
    'the API runs with DATABASE_URL naming the facilitator_api role; a compromised API process tries to INSERT a settlement batch, a batch item, a chain transaction and a signed version, and to UPDATE a chain transaction',
  );
  const role = `facilitator_api_${randomBytes(4).toString('hex')}`;
  await grantApiRole(stack.db.url, { role });
  const roleUrl = new URL(stack.db.url);
  roleUrl.username = role;
  roleUrl.password = '';
  const api = buildApi(loadConfig({ ...stack.env, DATABASE_URL: roleUrl.toString() }), createSilentLogger());
  const asRole = new Client({ connectionString: roleUrl.toString() });
  await asRole.connect();
  try {
    await stack.startWorker({}, { treasuryKey: true });
    const http = supertest(api.app);
    const v = await http.post('/v1/verify').send((await stack.payment()).formB());
    const s = await http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
    const settled = await finalState((await settlementOf(v.body.verification_id)).id);

    const refused = async (sql: string) => (await asRole.query(sql).then(() => 'allowed', (e: { code?: string }) => (e.code === '42501' ? 'permission denied' : `error ${e.code}`)));
    const batch = await refused(`INSERT INTO settlement_batches (id, chain_id, relayer, to_address, data, gas_cap, item_count) VALUES ('bat_x', 84532, '0x', '0x', '0x', '1', 1)`);
    const item = await refused(`INSERT INTO settlement_batch_items (settlement_id, batch_id, position) VALUES ('stl_x', 'bat_x', 0)`);
    const transaction = await refused(
      `INSERT INTO chain_transactions (id, settlement_id, purpose, chain_id, from_address, to_address, data, nonce, gas_limit, status, created_at, updated_at)
       VALUES ('ctx_x', 'stl_x', 'fee', 84532, '0x', '0x', '0x', 0, '1', 'allocated', now(), now())`,
    );
    const attempt = await refused(`INSERT INTO chain_transaction_attempts (hash, transaction_id, raw_transaction, max_fee_per_gas, max_priority_fee_per_gas, created_at) VALUES ('0x', 'ctx_x', '0x', '1', '1', now())`);
    const rewrite = await refused(`UPDATE chain_transactions SET data = '0x'`);
    const foreign = await refused(`INSERT INTO settlement_foreign_executions (settlement_id, chain_id, tx_hash, block_number, block_hash) VALUES ('stl_x', 84532, '0x', 1, '0x')`);

    const checks = [
      report.check('verify through the API under the role', 200, v.status),
      report.check('settle through the API under the role', true, s.status === 200 || s.status === 202),
      report.check('its settlement, run by the worker', 'settled', settled.state),
      report.check('INSERT INTO settlement_batches as the API role', 'permission denied', batch),
      report.check('INSERT INTO settlement_batch_items as the API role', 'permission denied', item),
      report.check('INSERT INTO chain_transactions as the API role', 'permission denied', transaction),
      report.check('INSERT INTO chain_transaction_attempts as the API role', 'permission denied', attempt),
      report.check('UPDATE chain_transactions as the API role', 'permission denied', rewrite),
      report.check('INSERT INTO settlement_foreign_executions as the API role', 'permission denied', foreign),
    ];
    report.save();
    expect(checks.every(Boolean)).toBe(true);
  } finally {
    await asRole.end();
    await api.close();
    await stack.killWorkers();
    // roles are the cluster's: this one goes with the test
    await stack.db.prisma.$executeRawUnsafe(`DROP OWNED BY ${role}`);
    await stack.db.prisma.$executeRawUnsafe(`DROP ROLE ${role}`);
  }
}, 120_000);


it('(insider 1) settlement rows the API role inserts straight into collect_fee: the treasury charges no fee for them', async () => {
  const report = abuseReport(
    'insider-1-forged-collect-fee',
    'A database writer inserts settlements past the pre-flight',
    "as the API's database role: three settlement rows in collect_fee on the sequential path for the merchant, each a payment nobody signed (a random payer, nonce and signature), and a fourth carrying the seal copied from a genuine settled row; enqueued for a worker holding the treasury key",
  );
  const { merchant, treasury } = stack.devnet.accounts;
  await stack.startWorker({}, { treasuryKey: true });
  // one real payment, settled as usual: its row is the template (and its seal the one copied)
  const v = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
  expect(v.status).toBe(200);
  await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: merchant.address });
  const real = (await settlementOf(v.body.verification_id)).id;
  const genuine = await finalState(real);

  const api = await asApiRole(stack);
  const allowanceBefore = await stack.devnet.allowance(merchant.address, treasury.address);
  const forged: string[] = [];
  try {
    const { rows } = await api.client.query(`SELECT payload FROM settlements WHERE id = $1`, [real]);
    const template = rows[0].payload as { authorization: Record<string, string>; signature: string };
    for (let i = 0; i < 4; i++) {
      const payer = Wallet.createRandom().address.toLowerCase();
      const nonce = hexlify(randomBytes(32));
      const payload = {
        ...template,
        authorization: { ...template.authorization, from: payer, nonce, validBefore: String(Math.floor(Date.now() / 1000) + 3600) },
        signature: hexlify(randomBytes(65)),
      };
      const id = `stl_forged${randomBytes(12).toString('hex')}`;
      // the last one keeps the genuine row's seal (admission); the others have none
      await api.client.query(
        `INSERT INTO settlements
           SELECT (jsonb_populate_record(s, jsonb_build_object(
             'id', $2::text, 'payment_key', null, 'state', 'collect_fee', 'settlement_mode', 'sequential',
             'payer', $3::text, 'nonce', $4::text, 'payload', $5::jsonb, 'authorization_fingerprint', null,
             'admission', CASE WHEN $6 THEN s.admission ELSE null END,
             'fee_tx_hash', null, 'fee_collected_at', null, 'settlement_tx_hash', null, 'settled_at', null,
             'merchant_paid', false, 'finality', null, 'send_claimed_at', null, 'created_at', now(), 'updated_at', now()))).*
           FROM settlements s WHERE s.id = $1`,
        [real, id, payer, nonce, JSON.stringify(payload), i === 3],
      );
      forged.push(id);
    }
  } finally {
    await api.client.end();
  }
  // the API process holds the queue's credentials too (and the sweeper re-enqueues idle rows anyway)
  const store = openQueueStore(queueStoreTargetOf(stack.config, 2));
  const queues = store.openQueues();
  try {
    for (const id of forged) await enqueueSettlement(queues, id);
  } finally {
    await queues.settlement.close();
    await queues.webhook.close();
    await store.close();
  }
  const fates = await Promise.all(forged.map(finalState));
  const feesSent = await stack.db.prisma.chainTransaction.count({ where: { settlementId: { in: forged }, purpose: 'fee' } });
  const allowanceAfter = await stack.devnet.allowance(merchant.address, treasury.address);
  const copiedSeal = (await stack.db.prisma.settlement.findUniqueOrThrow({ where: { id: forged[3] } })).admission;
  await stack.killWorkers();
  await api.drop();

  const checks = [
    report.check('the genuine settlement (sealed by its pre-flight)', 'settled', genuine.state),
    report.check('the forged rows without a seal', 'failed,failed,failed', fates.slice(0, 3).map((f) => f.state).join()),
    report.check("the forged row with the genuine row's seal copied", 'failed', fates[3].state),
    report.check('the copied seal was there (the attack was made)', true, copiedSeal !== null),
    report.check('fee transactions sent for the forged rows', 0, feesSent),
    report.check("the merchant's allowance to the treasury afterwards (unchanged)", allowanceBefore.toString(), allowanceAfter.toString()),
  ];
  report.note(`their failure: ${fates[0].failureReason}`);
  report.save();
  expect(checks.every(Boolean)).toBe(true);
}, 180_000);

it("(insider 1) a webhook_events row the API role inserts: the worker signs and sends it to no one; the API's own event is delivered", async () => {
  const report = abuseReport(
    'insider-1-forged-webhook-event',
    'A database writer stores a webhook event for the worker to sign',
    "as the API's database role, without WEBHOOK_SECRET: a 'settlement.settled' event row for the merchant (1000 USDC, a settlement that never existed) to the attacker's URL, and a genuine event (the API's verification.completed) rewritten to the attacker's URL; enqueued for the worker",
  );
  const { createServer } = await import('node:http');
  const { MerchantService, SecretBox } = await import('@facilitator/merchants');
  const { MerchantRepository, createPgPool } = await import('@facilitator/db');
  const { verifyWebhookHeaders } = await import('@facilitator/webhooks');
  const { enqueueWebhookDelivery } = await import('@facilitator/queue');
  const received: Array<{ path: string; body: string; headers: Record<string, string | string[] | undefined> }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body, headers: req.headers });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const merchant = stack.devnet.accounts.merchant.address.toLowerCase();

  // two genuine events, stored by the API (which holds WEBHOOK_SECRET): one left alone, one the writer redirects
  const genuine = await stack.http.post('/v1/verify').send((await stack.payment()).formB({ webhook_url: `http://127.0.0.1:${port}/merchant` }));
  const redirected = await stack.http.post('/v1/verify').send((await stack.payment()).formB({ webhook_url: `http://127.0.0.1:${port}/merchant` }));
  const eventOf = async (verificationId: string) => (await stack.db.prisma.webhookEvent.findFirstOrThrow({ where: { verificationId } })).id;
  const genuineId = await eventOf(genuine.body.verification_id);
  const redirectedId = await eventOf(redirected.body.verification_id);

  const api = await asApiRole(stack);
  const forgedId = `evt_forged${randomBytes(12).toString('hex')}`;
  const forged = { event_type: 'settlement.settled', event_id: forgedId, settlement_id: 'stl_never_existed', status: 'settled', data: { amount: '1000000000' }, merchant_address: merchant };
  try {
    await api.client.query(
      `INSERT INTO webhook_events (id, event_type, url, payload, merchant, created_at, updated_at) VALUES ($1, 'settlement.settled', $2, $3, $4, now(), now())`,
      [forgedId, `http://127.0.0.1:${port}/attacker`, JSON.stringify(forged), merchant],
    );
    await api.client.query(`UPDATE webhook_events SET url = $1 WHERE id = $2`, [`http://127.0.0.1:${port}/attacker`, redirectedId]);
  } finally {
    await api.client.end();
  }

  const worker = await stack.startWorker();
  const store = openQueueStore(queueStoreTargetOf(stack.config, 2));
  const queues = store.openQueues();
  const statusOf = async (id: string) => (await stack.db.prisma.webhookEvent.findUniqueOrThrow({ where: { id } })).status;
  try {
    for (const id of [forgedId, redirectedId, genuineId]) await enqueueWebhookDelivery(queues, id);
    for (let i = 0; i < 200; i++) {
      const statuses = await Promise.all([forgedId, redirectedId, genuineId].map(statusOf));
      if (!statuses.includes('pending')) break;
      await sleep(50);
    }
  } finally {
    await queues.settlement.close();
    await queues.webhook.close();
    await store.close();
  }
  const [forgedStatus, redirectedStatus, genuineStatus] = await Promise.all([forgedId, redirectedId, genuineId].map(statusOf));
  const refusedLogged = worker.lines.some((l) => l.includes(forgedId) && l.includes('no valid MAC'));
  await stack.killWorkers();
  server.close();
  await api.drop();

  const pool = createPgPool(stack.db.url);
  const merchants = new MerchantService({ repository: new MerchantRepository(pool), secretBox: new SecretBox(stack.env.WEBHOOK_SECRET), graceSeconds: 0, feeAmount: stack.config.feeAmount });
  const [secret] = await merchants.signingSecrets(merchant);
  await pool.end();
  const toAttacker = received.filter((r) => r.path === '/attacker');
  const toMerchant = received.filter((r) => r.path === '/merchant');
  const genuineCheck = toMerchant[0] ? (verifyWebhookHeaders(toMerchant[0].body, toMerchant[0].headers, secret) as { valid?: boolean }).valid : undefined;

  const checks = [
    report.check('deliveries to the attacker\'s URL (the forged event, the redirected one)', 0, toAttacker.length),
    report.check('the forged event row', 'failed', forgedStatus),
    report.check('the genuine event the writer redirected', 'failed', redirectedStatus),
    report.check('the worker logged the refusal', true, refusedLogged),
    report.check("the API's own event, untouched", 'delivered', genuineStatus),
    report.check("its delivery verifies with the merchant's secret", true, genuineCheck),
  ];
  report.save();
  expect(checks.every(Boolean)).toBe(true);
}, 120_000);
