// The wake-ups of waiting settle requests (issue 41, item 3), against a real migrated Postgres: the triggers of
// migration 20261128233000 notify at commit what a waiter needs to look at, and nothing else; the listener
// hears them, and reconnects after the server drops it.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdPrefix, newId } from '@facilitator/core';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database';
import { ChainTransactionRepository } from './repositories/chain-transaction-repository';
import { SettlementRequestStore } from './repositories/settlements';
import { VerificationRepository } from './repositories/verification-repository';
import { SettlementProgressListener, type SettlementProgressWake } from './settlement-progress-listener';

let db: TestDatabase;
let listener: SettlementProgressListener;
const heard: SettlementProgressWake[] = [];
const liveChanges: boolean[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  listener = new SettlementProgressListener(db.url, { reconnectMs: 50 });
  listener.onWake((wake) => heard.push(wake));
  listener.onLive((live) => liveChanges.push(live));
  await listener.start();
});
afterAll(async () => {
  await listener?.close();
  await db?.drop();
});

const CHAIN = 8453;
const USDC = '0x833589fcd6e4b24b4be8d3bb2a5ec2a7c3b7a8b0';
const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;

async function newSettlement(): Promise<string> {
  const verificationId = newId(IdPrefix.Verification);
  const settlementId = newId(IdPrefix.Settlement);
  const payment = { chainId: CHAIN, network: `eip155:${CHAIN}`, tokenAddress: USDC, payer: hex(20), merchant: hex(20), amount: '1000000', nonce: hex(32) };
  await new VerificationRepository(db.pool).create({ id: verificationId, status: 'verified', mechanism: 'exact/eip3009', scheme: 'exact', protocolVersion: 2, surface: 'x402', networkName: 'eip155:8453', request: {}, ...payment });
  await new SettlementRequestStore(db.prisma, db.pool).createOrGetForPayment({ id: settlementId, verificationId, mechanism: 'exact/eip3009', scheme: 'exact', nonceSpace: USDC, payload: null, paymentKey: `key:${settlementId}`, surface: 'x402', feeAmount: '1000', authorizationFingerprint: settlementId, ...payment });
  return settlementId;
}

async function heardAfter<T>(act: () => Promise<T>, quietMs = 150): Promise<{ result: T; wakes: SettlementProgressWake[] }> {
  const from = heard.length;
  const result = await act();
  await sleep(quietMs);
  return { result, wakes: heard.slice(from) };
}

it('is live once started', () => {
  expect(listener.live).toBe(true);
  expect(liveChanges).toEqual([true]);
});

it("names the settlements that became final, one notification for a statement's rows, and none for other columns or forward moves", async () => {
  const ids = [await newSettlement(), await newSettlement(), await newSettlement()];
  // the moves no waiter acts on (still unsent, or on its way) wake nobody
  const forward = await heardAfter(() => db.pool.query(`UPDATE settlements SET state = 'check_allowance' WHERE id = ANY($1)`, [ids]));
  expect(forward.wakes).toEqual([]);
  const moved = await heardAfter(() => db.pool.query(`UPDATE settlements SET state = 'failed' WHERE id = ANY($1)`, [ids]));
  expect(moved.wakes).toHaveLength(1);
  expect(moved.wakes[0].settlementIds.sort()).toEqual([...ids].sort());
  // a column no waiter reads (the send claim) wakes nobody
  const claimed = await heardAfter(() => db.pool.query(`UPDATE settlements SET send_claimed_at = now() WHERE id = ANY($1)`, [ids]));
  expect(claimed.wakes).toEqual([]);
  const waiting = await heardAfter(() => db.pool.query(`UPDATE settlements SET waiting_reason = 'treasury_busy' WHERE id = $1`, [ids[0]]));
  expect(waiting.wakes).toEqual([{ settlementIds: [ids[0]], batchSigned: false }]);
});

it('is told nothing before the commit, and nothing of a rolled-back change', async () => {
  const id = await newSettlement();
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    const inside = await heardAfter(() => client.query(`UPDATE settlements SET state = 'failed' WHERE id = $1`, [id]));
    expect(inside.wakes).toEqual([]);
    const rolledBack = await heardAfter(() => client.query('ROLLBACK'));
    expect(rolledBack.wakes).toEqual([]);
  } finally {
    client.release();
  }
});

it("names a transfer's settlement when it is signed, a batch when its settle transaction is, and nobody for a fee", async () => {
  const repo = new ChainTransactionRepository(db.pool);
  const from = hex(20);
  const tx = (settlementId: string, purpose: 'fee' | 'transfer' | 'settle') =>
    ({ settlementId, purpose, chainId: CHAIN, from, to: USDC, data: '0x', gasLimit: 100_000n, authenticator: '0x' }) as const;
  const attempt = () => ({ hash: hex(32), rawTransaction: `0x02${randomBytes(40).toString('hex')}`, fees: { maxFeePerGas: 2n, maxPriorityFeePerGas: 1n } });

  const paying = await newSettlement();
  const fee = (await repo.allocateAndInsert(tx(paying, 'fee'), 0n))!;
  const feeSigned = await heardAfter(() => repo.storeFirstAttempt(fee, async () => attempt()));
  expect(feeSigned.wakes).toEqual([]);
  const transfer = (await repo.allocateAndInsert(tx(paying, 'transfer'), 1n))!;
  const transferSigned = await heardAfter(() => repo.storeFirstAttempt(transfer, async () => attempt()));
  expect(transferSigned.wakes).toEqual([{ settlementIds: [paying], batchSigned: false }]);

  const batchId = newId(IdPrefix.Settlement); // the batch's id stands in the settlement_id column of its settle transaction
  await db.pool.query('ALTER TABLE chain_transactions DISABLE TRIGGER ALL');
  const settle = await repo.allocateAndInsert(tx(batchId, 'settle'), 2n).finally(() => db.pool.query('ALTER TABLE chain_transactions ENABLE TRIGGER ALL'));
  const batchSigned = await heardAfter(() => repo.storeFirstAttempt(settle!, async () => attempt()));
  expect(batchSigned.wakes).toEqual([{ settlementIds: [], batchSigned: true }]);
});

it('comes back after the server drops its connection, and says so', async () => {
  const { rows } = await db.pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
  );
  expect(rows).toHaveLength(1);
  await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
  for (let i = 0; i < 100 && !(liveChanges.length >= 3 && listener.live); i++) await sleep(50);
  expect(liveChanges).toEqual([true, false, true]);
  const id = await newSettlement();
  const moved = await heardAfter(() => db.pool.query(`UPDATE settlements SET state = 'settled' WHERE id = $1`, [id]));
  expect(moved.wakes).toEqual([{ settlementIds: [id], batchSigned: false }]);
});
