// Round trip of the settlements table's readers against a real, migrated Postgres: settlements started, moved and
// parked through the repository and read back through it, through both of its mappers (Prisma and pg).
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdPrefix, newId } from '@facilitator/core';
import { createTestDatabase, type TestDatabase } from '../../../../../test/support/database';
import { grantApiRole } from '../../api-role';
import { settlementRow } from '../../testing';
import type { SettlementState } from '../../generated/prisma/client';
import { SettlementBatchRepository } from '../settlement-batch-repository';
import { allSettlementReaders, type AllSettlementReaders } from '../../testing/all-settlement-readers';
import { SettlementStore, type FeeReservationRequest, type NewSettlementRow, type SettlementRow } from '.';
import { VerificationRepository } from '../verification-repository';
import { WebhookEventRepository } from '../webhook-event-repository';

let db: TestDatabase;
let repo: AllSettlementReaders;
let verifications: VerificationRepository;
let events: WebhookEventRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = allSettlementReaders(db.prisma, db.pool);
  verifications = new VerificationRepository(db.pool);
  events = new WebhookEventRepository(db.prisma, db.pool);
});

afterAll(async () => {
  await db?.drop();
});

const CHAIN = 8453;
const USDC = '0x833589fcd6e4b24b4be8d3bb2a5ec2a7c3b7a8b0';
const OTHER_TOKEN = '0x036cbd53842c5426634e7929541ec2318f3dcf7e';
const PAYER = '0x1111111111111111111111111111111111111111';
const TWO_POW_255 = 2n ** 255n;

const randomHex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
const randomAddress = () => randomHex(20);

/** A verified payment and the data to start its settlement. */
async function newPayment(overrides: Partial<NewSettlementRow> = {}): Promise<NewSettlementRow> {
  const verificationId = newId(IdPrefix.Verification);
  const base = {
    chainId: CHAIN,
    network: `eip155:${overrides.chainId ?? CHAIN}`,
    tokenAddress: USDC,
    payer: PAYER,
    merchant: randomAddress(),
    amount: TWO_POW_255.toString(),
    nonce: randomHex(32),
    ...overrides,
  };
  await verifications.create({
    id: verificationId,
    status: 'verified',
    mechanism: 'exact/eip3009',
    scheme: 'exact',
    protocolVersion: 2,
    surface: 'x402',
    chainId: base.chainId,
    network: base.network,
    networkName: base.network,
    tokenAddress: base.tokenAddress,
    payer: base.payer,
    merchant: base.merchant,
    amount: base.amount,
    nonce: base.nonce,
    request: { paymentRequirements: { amount: base.amount } },
  });
  return {
    id: newId(IdPrefix.Settlement),
    verificationId,
    paymentKey: `${base.chainId}:${base.tokenAddress}:${base.payer}:${base.nonce}`,
    surface: 'x402',
    feeAmount: '10000',
    metadata: null,
    authorizationFingerprint: `fp:${base.nonce}`,
    mechanism: 'exact/eip3009',
    scheme: 'exact',
    nonceSpace: base.tokenAddress,
    payload: { authorization: { from: base.payer, to: base.merchant, value: base.amount, validAfter: '0', validBefore: '4102444800', nonce: base.nonce }, signature: '0x' + '1b'.repeat(65) },
    ...base,
    ...overrides,
  };
}

async function started(overrides: Partial<NewSettlementRow> = {}): Promise<SettlementRow> {
  return (await repo.createOrGetForPayment(await newPayment(overrides))).settlement;
}

/** Moves a settlement along a path of states, each step through `transition`. */
async function walk(id: string, path: SettlementState[]): Promise<SettlementRow> {
  let row = (await repo.findById(id))!;
  for (const to of path) {
    const moved = await repo.transition({ id, from: row.state, to });
    if (!moved) throw new Error(`could not move ${id} from ${row.state} to ${to}`);
    row = moved;
  }
  return row;
}

function history(settlementId: string) {
  return db.prisma.settlementTransition.findMany({ where: { settlementId }, orderBy: { id: 'asc' } });
}

async function setUpdatedAt(id: string, at: Date): Promise<void> {
  await db.pool.query('UPDATE settlements SET updated_at = $2 WHERE id = $1', [id, at]);
}

describe('AllSettlementReaders', () => {
  describe('createOrGetForPayment', () => {
    it('creates a pending settlement and maps every column, nulls and 2^255 amounts included', async () => {
      const data = await newPayment({ metadata: { orderId: 'o-7', tags: ['a', 'b'], big: TWO_POW_255.toString() }, feeAmount: (TWO_POW_255 - 1n).toString() });
      const before = Date.now();
      const { settlement, created } = await repo.createOrGetForPayment(data);

      expect(created).toBe(true);
      // a new settlement: what was given, state pending, every other column empty (the factory's defaults)
      expect(settlement).toStrictEqual(
        settlementRow({
          id: data.id,
          verificationId: data.verificationId,
          paymentKey: data.paymentKey,
          authorizationFingerprint: data.authorizationFingerprint,
          surface: 'x402',
          state: 'pending',
          chainId: CHAIN,
          tokenAddress: USDC,
          payer: PAYER,
          merchant: data.merchant,
          amount: TWO_POW_255.toString(),
          nonce: data.nonce,
          feeAmount: (TWO_POW_255 - 1n).toString(),
          metadata: { orderId: 'o-7', tags: ['a', 'b'], big: TWO_POW_255.toString() },
          mechanism: 'exact/eip3009',
          scheme: 'exact',
          nonceSpace: USDC,
          payload: data.payload as SettlementRow['payload'],
          createdAt: expect.any(Date),
          updatedAt: expect.any(Date),
        }),
      );
      expect(Math.abs(settlement.createdAt.getTime() - before)).toBeLessThan(5_000);

      // the pg mapper and Prisma agree on every field
      expect(await repo.findById(data.id)).toStrictEqual(settlement);
      expect(await repo.findByIds([data.id])).toStrictEqual([settlement]);
      expect((await history(data.id)).map((h) => [h.fromState, h.toState, h.note])).toEqual([[null, 'pending', null]]);
    });

    it('stores a missing metadata as null', async () => {
      const data = await newPayment();
      const { metadata: _metadata, ...withoutMetadata } = data;
      const { settlement } = await repo.createOrGetForPayment(withoutMetadata);
      expect(settlement.metadata).toBeNull();
      expect((await repo.findById(data.id))!.metadata).toBeNull();
    });

    it('returns the live settlement of the payment instead of starting a second one', async () => {
      const data = await newPayment();
      const first = await repo.createOrGetForPayment(data);
      const secondId = newId(IdPrefix.Settlement);
      const second = await repo.createOrGetForPayment({ ...data, id: secondId, feeAmount: '1' });

      expect(second.created).toBe(false);
      expect(second.settlement).toStrictEqual(first.settlement);
      expect(await repo.findById(secondId)).toBeNull();
      expect(await history(data.id)).toHaveLength(1);
    });

    it('under concurrency exactly one caller creates and all get the same settlement', async () => {
      const data = await newPayment();
      const results = await Promise.all(Array.from({ length: 12 }, () => repo.createOrGetForPayment({ ...data, id: newId(IdPrefix.Settlement) })));

      expect(results.filter((r) => r.created)).toHaveLength(1);
      const winner = results.find((r) => r.created)!.settlement.id;
      expect(new Set(results.map((r) => r.settlement.id))).toEqual(new Set([winner]));
      const { rows } = await db.pool.query('SELECT id FROM settlements WHERE verification_id = $1', [data.verificationId]);
      expect(rows).toEqual([{ id: winner }]);
    });

    it('starts a new settlement once the previous one gave its payment key up', async () => {
      const data = await newPayment();
      await repo.createOrGetForPayment(data);
      const failed = await repo.transition({ id: data.id, from: 'pending', to: 'failed', data: { paymentKey: null, errorCode: 'rpc_unavailable' } });
      expect(failed!.paymentKey).toBeNull();

      const next = await repo.createOrGetForPayment({ ...data, id: newId(IdPrefix.Settlement) });
      expect(next.created).toBe(true);
      expect(next.settlement.id).not.toBe(data.id);
      expect(next.settlement.paymentKey).toBe(data.paymentKey);
    });
  });

  describe('findByIds', () => {
    it('reads several settlements in one query and ignores unknown ids', async () => {
      const a = await started();
      const b = await started();
      const found = await repo.findByIds([a.id, newId(IdPrefix.Settlement), b.id]);
      expect(found.sort((x, y) => x.id.localeCompare(y.id))).toStrictEqual([a, b].sort((x, y) => x.id.localeCompare(y.id)));
      expect(await repo.findByIds([])).toEqual([]);
    });
  });

  describe("a sequential x402 transfer: the worker's commitment and the settle request's withholding", () => {
    const sequentialAt = async (path: SettlementState[], mode = 'sequential') => {
      const s = await walk((await started()).id, path);
      await db.pool.query('UPDATE settlements SET settlement_mode = $2 WHERE id = $1', [s.id, mode]);
      return s;
    };

    it('withholds a transfer the worker has not committed to (fee in flight or mined); the worker then cannot commit', async () => {
      for (const path of [['check_allowance', 'collect_fee'], ['check_allowance', 'collect_fee', 'fee_collected']] as SettlementState[][]) {
        const s = await sequentialAt(path);
        expect(await repo.withholdTransfer(s.id)).toBe(true);
        // a repeated request finds it withheld still
        expect(await repo.withholdTransfer(s.id)).toBe(true);
        expect(await repo.claimTransfer(s.id)).toBe(false);
        expect((await repo.findById(s.id))!.transferDecision).toBe('withheld');
      }
    });

    it('does not withhold a transfer the worker committed to first, which it may commit to again (a retry)', async () => {
      const s = await sequentialAt(['check_allowance', 'collect_fee', 'fee_collected']);
      expect(await repo.claimTransfer(s.id)).toBe(true);
      expect(await repo.withholdTransfer(s.id)).toBe(false);
      expect(await repo.claimTransfer(s.id)).toBe(true);
      expect((await repo.findById(s.id))!.transferDecision).toBe('send');
    });

    it('withholds nothing on the atomic path, before the fee, or once the transfer is executing', async () => {
      expect(await repo.withholdTransfer((await sequentialAt(['check_allowance', 'collect_fee'], 'atomic')).id)).toBe(false);
      expect(await repo.withholdTransfer((await sequentialAt(['check_allowance'])).id)).toBe(false);
      expect(await repo.withholdTransfer((await sequentialAt(['check_allowance', 'collect_fee', 'fee_collected', 'executing'])).id)).toBe(false);
    });
  });

  describe('the claim to send and the stop of an unsent settlement', () => {
    /** Until a session of this database waits for a row lock (the statement under test is blocked). */
    const untilWaitingOnLock = async () => {
      for (;;) {
        const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        if (rows[0].n > 0) return;
        await sleep(10);
      }
    };
    const stop = (s: SettlementRow) => repo.transition({ id: s.id, from: s.state, to: 'failed', onlyUnclaimed: true, data: { errorCode: 'settlement_failed' } });

    it('claims a live settlement once (the first time is kept), and never a final one', async () => {
      const s = await walk((await started()).id, ['check_allowance', 'collect_fee']);
      expect(await repo.claimSend(s.id)).toBe(true);
      const claimedAt = (await repo.findById(s.id))!.sendClaimedAt;
      expect(claimedAt).toBeInstanceOf(Date);
      expect(await repo.claimSend(s.id)).toBe(true);
      expect((await repo.findById(s.id))!.sendClaimedAt).toEqual(claimedAt);
      const done = await walk((await started()).id, ['failed']);
      expect(await repo.claimSend(done.id)).toBe(false);
      expect((await repo.findById(done.id))!.sendClaimedAt).toBeNull();
    });

    it('a stop (onlyUnclaimed) does not move a claimed settlement; a stopped one cannot be claimed', async () => {
      const claimed = await walk((await started()).id, ['check_allowance', 'collect_fee']);
      await repo.claimSend(claimed.id);
      expect(await stop(claimed)).toBeNull();
      expect((await repo.findById(claimed.id))!.state).toBe('collect_fee');
      const stopped = await walk((await started()).id, ['check_allowance', 'collect_fee']);
      expect((await stop(stopped))!.state).toBe('failed');
      expect(await repo.claimSend(stopped.id)).toBe(false);
    });

    it('a stop (onlyUnclaimed) does not move a settlement waiting for the confirmations of someone else\'s transaction that paid it', async () => {
      const s = await started();
      expect(await repo.markWaiting(s.id, 'pending', 'execution_confirming', { tx_hash: randomHex(32) })).toBe(true);
      expect(await stop((await repo.findById(s.id))!)).toBeNull();
      expect((await repo.findById(s.id))!.state).toBe('pending');
    });

    it('a stop that waits on an uncommitted claim finds it claimed once it commits, and a claim that waits on an uncommitted stop finds it final', async () => {
      const live = () => started().then((s) => walk(s.id, ['check_allowance', 'collect_fee']));
      const claimedFirst = await live();
      const worker = await db.pool.connect();
      try {
        await worker.query('BEGIN');
        expect(await SettlementStore.claimSendWith(worker, [claimedFirst.id])).toEqual([claimedFirst.id]);
        const stopping = stop(claimedFirst);
        // the stop waits for the worker's row lock (seen by Postgres), so it decides on the committed claim
        await untilWaitingOnLock();
        await worker.query('COMMIT');
        expect(await stopping).toBeNull();
      } finally {
        worker.release();
      }

      const stoppedFirst = await live();
      const request = await db.pool.connect();
      try {
        await request.query('BEGIN');
        await request.query(`UPDATE settlements SET state = 'failed' WHERE id = $1 AND send_claimed_at IS NULL`, [stoppedFirst.id]);
        const claiming = repo.claimSend(stoppedFirst.id);
        await untilWaitingOnLock();
        await request.query('COMMIT');
        expect(await claiming).toBe(false);
      } finally {
        request.release();
      }
    });

    it('a batch is stored only when every one of its settlements can be claimed; the stopped ones are named and nothing is kept', async () => {
      const batches = new SettlementBatchRepository(db.pool);
      const [a, b, c] = await Promise.all([0, 1, 2].map(() => started().then((s) => walk(s.id, ['check_allowance', 'collect_fee']))));
      expect((await stop(b))!.state).toBe('failed');
      const refused = await batches.create({ chainId: CHAIN, relayer: randomAddress(), to: randomAddress(), data: '0x', gasCap: 1n, settlementIds: [a.id, b.id, c.id] });
      expect(refused).toEqual({ stored: false, ended: [b.id] });
      // rolled back whole: no item stored, and the live ones are not left claimed
      expect(await batches.alreadyBatched([a.id, b.id, c.id])).toEqual(new Set());
      expect((await repo.findByIds([a.id, c.id])).map((s) => s.sendClaimedAt)).toEqual([null, null]);
      const stored = await batches.create({ chainId: CHAIN, relayer: randomAddress(), to: randomAddress(), data: '0x', gasCap: 1n, settlementIds: [a.id, c.id] });
      expect(stored).toMatchObject({ itemCount: 2 });
      expect((await repo.findByIds([a.id, c.id])).every((s) => s.sendClaimedAt !== null)).toBe(true);
      // and a stop no longer applies to them
      expect(await stop((await repo.findById(a.id))!)).toBeNull();
    });

    it('of a claim and a stop racing on the same settlement, exactly one wins, every time', async () => {
      for (let i = 0; i < 40; i++) {
        const s = await walk((await started()).id, ['check_allowance', 'collect_fee']);
        // sent in both orders, so each side is sometimes the one that waits for the other's lock
        const [claimed, stopped] =
          i % 2 === 0 ? await Promise.all([repo.claimSend(s.id), stop(s)]) : await Promise.all([stop(s), repo.claimSend(s.id)]).then(([b, a]) => [a, b] as const);
        expect(claimed !== (stopped !== null)).toBe(true);
        const after = (await repo.findById(s.id))!;
        expect(after.state).toBe(claimed ? 'collect_fee' : 'failed');
        expect(after.sendClaimedAt !== null).toBe(claimed);
      }
    });
  });

  describe('transition', () => {
    it('moves only from the expected state, writing the fields given and a history row', async () => {
      const s = await started();
      await sleep(5);

      expect(await repo.transition({ id: s.id, from: 'check_allowance', to: 'collect_fee' })).toBeNull();
      expect(await repo.findById(s.id)).toEqual(s);
      expect(await history(s.id)).toHaveLength(1);

      const feeCollectedAt = new Date('2030-05-06T07:08:09.123Z');
      const feeTxHash = randomHex(32);
      await walk(s.id, ['check_allowance', 'collect_fee']);
      const moved = await repo.transition({
        id: s.id,
        from: 'collect_fee',
        to: 'fee_collected',
        data: { feeTxHash, feeCollectedAt },
        note: { gasUsed: '52000', by: 'worker-1' },
      });

      expect(moved).toStrictEqual({ ...s, state: 'fee_collected', feeTxHash, feeCollectedAt, updatedAt: expect.any(Date) });
      expect(moved!.feeCollectedAt).toBeInstanceOf(Date);
      expect(moved!.updatedAt.getTime()).toBeGreaterThan(s.updatedAt.getTime());
      expect(await repo.findById(s.id)).toEqual(moved);
      expect(await repo.findByIds([s.id])).toStrictEqual([moved]);
      expect((await history(s.id)).map((h) => [h.fromState, h.toState, h.note])).toEqual([
        [null, 'pending', null],
        ['pending', 'check_allowance', null],
        ['check_allowance', 'collect_fee', null],
        ['collect_fee', 'fee_collected', { gasUsed: '52000', by: 'worker-1' }],
      ]);
    });

    it('writes every updatable field, JSON error details included, and clears them with null', async () => {
      const s = await started();
      const settledAt = new Date('2030-01-02T03:04:05.678Z');
      const failed = await repo.transition({
        id: s.id,
        from: 'pending',
        to: 'failed',
        data: {
          paymentKey: null,
          feeTxHash: randomHex(32),
          feeCollectedAt: settledAt,
          settlementTxHash: randomHex(32),
          settledAt,
          merchantPaid: true,
          errorCode: 'transfer_reverted',
          errorMessage: 'execution reverted',
          errorDetails: { revert: 'FiatTokenV2: authorization is used', values: [TWO_POW_255.toString()] },
        },
      });
      expect(failed).toMatchObject({
        state: 'failed',
        paymentKey: null,
        settledAt,
        merchantPaid: true,
        errorCode: 'transfer_reverted',
        errorMessage: 'execution reverted',
        errorDetails: { revert: 'FiatTokenV2: authorization is used', values: [TWO_POW_255.toString()] },
      });
      expect(await repo.findById(s.id)).toEqual(failed);

      // a transition out of failed does not exist in the machine, but the repository only checks `from`
      const cleared = await repo.transition({ id: s.id, from: 'failed', to: 'failed', data: { errorDetails: null, errorCode: null, merchantPaid: false } });
      expect(cleared).toMatchObject({ errorDetails: null, errorCode: null, merchantPaid: false, errorMessage: 'execution reverted', settledAt });
      expect(await repo.findByIds([s.id])).toStrictEqual([cleared]);
    });

    it('lets exactly one of two concurrent movers win', async () => {
      const s = await started();
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => repo.transition({ id: s.id, from: 'pending', to: 'check_allowance', note: { worker: i } })),
      );
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      expect(await history(s.id)).toHaveLength(2);
    });

    it('stores the event made from the moved settlement in the same transaction', async () => {
      const s = await started();
      const eventId = newId(IdPrefix.WebhookEvent);
      const seen: SettlementRow[] = [];
      const moved = await repo.transition({
        id: s.id,
        from: 'pending',
        to: 'failed',
        data: { errorCode: 'expired' },
        event: (row) => {
          seen.push(row);
          return { id: eventId, eventType: 'settlement.failed', verificationId: row.verificationId, settlementId: row.id, url: 'https://m.example/h', mac: 'test-mac', payload: { state: row.state, errorCode: row.errorCode } };
        },
      });

      expect(seen).toStrictEqual([moved]);
      const event = await events.findWithAttempts(eventId);
      expect(event).toMatchObject({ settlementId: s.id, verificationId: s.verificationId, eventType: 'settlement.failed', status: 'pending', payload: { state: 'failed', errorCode: 'expired' } });
    });

    it('makes no event when the settlement had moved on, nor when the maker returns none', async () => {
      const s = await started();
      const maker = jest.fn(() => undefined);
      expect(await repo.transition({ id: s.id, from: 'executing', to: 'settled', event: maker })).toBeNull();
      expect(maker).not.toHaveBeenCalled();

      expect(await repo.transition({ id: s.id, from: 'pending', to: 'check_allowance', event: maker })).not.toBeNull();
      expect(maker).toHaveBeenCalledTimes(1);
      expect(await events.list({ settlementId: s.id }, 10)).toEqual([]);
    });

    it('rolls the transition back when its event cannot be stored', async () => {
      const s = await started();
      const taken = await started();
      const eventId = newId(IdPrefix.WebhookEvent);
      await events.insert({ id: eventId, eventType: 'settlement.failed', verificationId: taken.verificationId, settlementId: taken.id, url: 'https://m.example/h', mac: 'test-mac', payload: {} });

      await expect(
        repo.transition({
          id: s.id,
          from: 'pending',
          to: 'failed',
          event: (row) => ({ id: eventId, eventType: 'settlement.failed', verificationId: row.verificationId, settlementId: row.id, url: 'https://m.example/h', mac: 'test-mac', payload: {} }),
        }),
      ).rejects.toMatchObject({ code: '23505', dependency: 'database' });
      expect((await repo.findById(s.id))!.state).toBe('pending');
      expect(await history(s.id)).toHaveLength(1);
    });
  });

  describe('transitionReservingFee', () => {
    const reserve = (s: SettlementRow, fee: bigint, allowance: bigint, balance: bigint, overrides: Partial<FeeReservationRequest> = {}) =>
      repo.transitionReservingFee(
        { id: s.id, from: 'check_allowance', to: 'collect_fee' },
        { merchant: s.merchant, chainId: s.chainId, tokenAddress: s.tokenAddress, fee, allowance, balance, ...overrides },
      );

    it('reserves while allowance and balance cover the fee on top of the fees in flight, and refuses beyond', async () => {
      const merchant = randomAddress();
      const a = await started({ merchant, feeAmount: '400' });
      const b = await started({ merchant, feeAmount: '300' });
      const c = await started({ merchant, feeAmount: '300' });
      for (const s of [a, b, c]) await walk(s.id, ['check_allowance']);

      const first = await reserve(a, 400n, 1_000n, 5_000n);
      expect(first.inFlight).toBe(0n);
      expect(first.moved).toMatchObject({ id: a.id, state: 'collect_fee' });

      // exactly at the limit: 400 in flight + 300 <= min(700, 5000)
      const second = await reserve(b, 300n, 700n, 5_000n);
      expect(second).toEqual({ moved: expect.objectContaining({ id: b.id, state: 'collect_fee' }), inFlight: 400n });

      // the balance is the tighter bound now: 700 + 300 > min(10_000, 999)
      const refused = await reserve(c, 300n, 10_000n, 999n);
      expect(refused).toEqual({ moved: null, inFlight: 700n });
      expect((await repo.findById(c.id))!.state).toBe('check_allowance');
      expect(await history(c.id)).toHaveLength(2);

      // once a reserved fee leaves collect_fee it is no longer in flight
      await repo.transition({ id: a.id, from: 'collect_fee', to: 'fee_collected' });
      const third = await reserve(c, 300n, 10_000n, 999n);
      expect(third).toEqual({ moved: expect.objectContaining({ id: c.id, state: 'collect_fee' }), inFlight: 300n });
    });

    it('counts only the same merchant, chain and token, and never the settlement itself', async () => {
      const merchant = randomAddress();
      const otherToken = await started({ merchant, tokenAddress: OTHER_TOKEN, feeAmount: '500' });
      const otherChain = await started({ merchant, chainId: 84532, feeAmount: '500' });
      const otherMerchant = await started({ feeAmount: '500' });
      for (const s of [otherToken, otherChain, otherMerchant]) await walk(s.id, ['check_allowance', 'collect_fee']);

      const s = await started({ merchant, feeAmount: '500' });
      await walk(s.id, ['check_allowance', 'collect_fee']);
      // already in collect_fee: its own fee is not counted, and the transition finds it moved on
      expect(await reserve(s, 500n, 500n, 500n)).toEqual({ moved: null, inFlight: 0n });

      const t = await started({ merchant, feeAmount: '500' });
      await walk(t.id, ['check_allowance']);
      expect(await reserve(t, 500n, 1_000n, 1_000n)).toEqual({ moved: expect.objectContaining({ id: t.id }), inFlight: 500n });
    });

    it('sums fees in flight beyond 64 bits exactly', async () => {
      const merchant = randomAddress();
      const big = await started({ merchant, feeAmount: TWO_POW_255.toString() });
      const other = await started({ merchant, feeAmount: TWO_POW_255.toString() });
      await walk(big.id, ['check_allowance']);
      await walk(other.id, ['check_allowance']);
      const max = 2n ** 256n;

      expect((await reserve(big, TWO_POW_255, max, max)).inFlight).toBe(0n);
      expect(await reserve(other, TWO_POW_255 + 1n, max, max)).toEqual({ moved: null, inFlight: TWO_POW_255 });
      expect(await reserve(other, TWO_POW_255, max, max)).toEqual({ moved: expect.objectContaining({ state: 'collect_fee' }), inFlight: TWO_POW_255 });
    });

    it('never reserves more than the merchant can pay under concurrency', async () => {
      const merchant = randomAddress();
      const rows = await Promise.all(Array.from({ length: 10 }, () => started({ merchant, feeAmount: '100' })));
      for (const s of rows) await walk(s.id, ['check_allowance']);

      const results = await Promise.all(rows.map((s) => reserve(s, 100n, 350n, 1_000n)));
      expect(results.filter((r) => r.moved !== null)).toHaveLength(3);
      const { rows: inFlight } = await db.pool.query("SELECT count(*)::int AS n FROM settlements WHERE merchant = $1 AND state = 'collect_fee'", [merchant]);
      expect(inFlight[0].n).toBe(3);
    });
  });

  describe("a merchant's fees in flight, kept as they change (issue 41, item 2)", () => {
    const kept = async (merchant: string) => {
      const { rows } = await db.pool.query<{ in_flight: string }>('SELECT in_flight::text FROM merchant_fees_in_flight WHERE merchant = $1 AND chain_id = $2 AND token_address = $3', [merchant, CHAIN, USDC]);
      return BigInt(rows[0]?.in_flight ?? '0');
    };
    const summed = async (merchant: string) => {
      const { rows } = await db.pool.query<{ n: string }>("SELECT coalesce(sum(fee_amount::numeric), 0)::text AS n FROM settlements WHERE merchant = $1 AND chain_id = $2 AND token_address = $3 AND state = 'collect_fee'", [merchant, CHAIN, USDC]);
      return BigInt(rows[0].n);
    };
    const reserve = (s: SettlementRow, fee: bigint) =>
      repo.transitionReservingFee({ id: s.id, from: 'check_allowance', to: 'collect_fee' }, { merchant: s.merchant, chainId: s.chainId, tokenAddress: s.tokenAddress, fee, allowance: 10n ** 18n, balance: 10n ** 18n });

    it('equals the sum of its settlements in collect_fee through every way in and out, concurrent ones included', async () => {
      const merchant = randomAddress();
      const rows = await Promise.all(Array.from({ length: 40 }, (_, i) => started({ merchant, feeAmount: String(100 + i) })));
      for (const s of rows) await walk(s.id, ['check_allowance']);
      // in: reservations, all at once
      await Promise.all(rows.map((s) => reserve(s, BigInt(s.feeAmount))));
      expect(await kept(merchant)).toBe(await summed(merchant));
      expect(await kept(merchant)).toBe(rows.reduce((t, s) => t + BigInt(s.feeAmount), 0n));
      // out: fee collected, failed, settled on someone else's transaction, and rows deleted, at once
      await Promise.all(
        rows.map((s, i) =>
          i % 4 === 0 ? walk(s.id, ['fee_collected'])
          : i % 4 === 1 ? walk(s.id, ['failed'])
          : i % 4 === 2 ? walk(s.id, ['settled'])
          : Promise.resolve(),
        ),
      );
      expect(await kept(merchant)).toBe(await summed(merchant));
      await db.pool.query('DELETE FROM settlement_transitions WHERE settlement_id = $1', [rows[3].id]);
      await db.pool.query('DELETE FROM settlements WHERE id = $1', [rows[3].id]);
      expect(await kept(merchant)).toBe(await summed(merchant));
      expect(await kept(merchant)).toBe(rows.filter((_, i) => i % 4 === 3 && i !== 3).reduce((t, s) => t + BigInt(s.feeAmount), 0n));
    });

    it("a reservation reads the kept sum, not the merchant's rows, and still excludes the settlement itself", async () => {
      const merchant = randomAddress();
      const a = await started({ merchant, feeAmount: '500' });
      await walk(a.id, ['check_allowance']);
      expect((await reserve(a, 500n)).moved).not.toBeNull();
      // a row the sum would have found, stored past the trigger: the reservation does not count it (it reads the kept sum)
      await db.pool.query('ALTER TABLE settlements DISABLE TRIGGER settlements_fees_in_flight');
      const hidden = await started({ merchant, feeAmount: '700' });
      await db.pool.query(`UPDATE settlements SET state = 'collect_fee' WHERE id = $1`, [hidden.id]);
      await db.pool.query('ALTER TABLE settlements ENABLE TRIGGER settlements_fees_in_flight');
      const b = await started({ merchant, feeAmount: '300' });
      await walk(b.id, ['check_allowance']);
      expect((await reserve(b, 300n)).inFlight).toBe(500n);
    });

    it("the API's database role moves the kept sum only by moving settlements: no trigger of its own, no shadowing temp table, no NaN or negative fee", async () => {
      const role = `facilitator_api_${randomBytes(4).toString('hex')}`;
      await grantApiRole(db.url, { role });
      const roleUrl = new URL(db.url);
      roleUrl.username = role;
      roleUrl.password = '';
      const api = new Client({ connectionString: roleUrl.toString() });
      await api.connect();
      const outcome = (sql: string, values: unknown[] = []) =>
        api.query(sql, values).then(() => 'allowed', (e: { code?: string }) => (e.code === '42501' ? 'permission denied' : 'refused'));
      try {
        const merchant = randomAddress();
        const a = await started({ merchant, feeAmount: '500' });
        await walk(a.id, ['check_allowance']);
        expect((await reserve(a, 500n)).moved).not.toBeNull();
        expect(await kept(merchant)).toBe(500n);

        // 1. its own (temporary) table with a trigger running the SECURITY DEFINER function: it would write any sum
        await api.query('CREATE TEMP TABLE forged (merchant text, chain_id int, token_address text, state text, fee_amount text)');
        const trigger = await outcome('CREATE TRIGGER forged_in_flight AFTER INSERT ON forged FOR EACH ROW EXECUTE FUNCTION public.merchant_fees_in_flight_track()');
        await api.query("INSERT INTO forged VALUES ($1, $2, $3, 'collect_fee', '-1000000000000')", [merchant, CHAIN, USDC]).catch(() => undefined);
        expect({ trigger, kept: await kept(merchant) }).toEqual({ trigger: 'permission denied', kept: 500n });

        // 2. a temporary table named like the counter: the trigger of its own writes to settlements must not write there
        await api.query('CREATE TEMP TABLE merchant_fees_in_flight (merchant text, chain_id int, token_address text, in_flight numeric, PRIMARY KEY (merchant, chain_id, token_address))');
        await api.query("UPDATE settlements SET state = 'failed' WHERE id = $1", [a.id]);
        expect(await kept(merchant)).toBe(await summed(merchant));
        await api.query("UPDATE settlements SET state = 'collect_fee' WHERE id = $1", [a.id]);
        expect(await kept(merchant)).toBe(await summed(merchant));
        await api.query('DROP TABLE pg_temp.merchant_fees_in_flight');

        // 3. a fee that is no amount: NaN would stay in the sum for good (every later reservation refused), a negative one lets reservations past the allowance
        const nan = await outcome("UPDATE settlements SET fee_amount = 'NaN' WHERE id = $1", [a.id]);
        const negative = await outcome("UPDATE settlements SET fee_amount = '-1000000000000' WHERE id = $1", [a.id]);
        const infinite = await outcome("UPDATE settlements SET fee_amount = '-Infinity' WHERE id = $1", [a.id]);
        expect({ nan, negative, infinite, kept: await kept(merchant) }).toEqual({ nan: 'refused', negative: 'refused', infinite: 'refused', kept: await summed(merchant) });

        // 4. the reservation's function is the worker's
        expect(await outcome("SELECT settlement_fees_in_flight_locked('', $1, $2, $3, '')", [merchant, CHAIN, USDC])).toBe('permission denied');

        // its ordinary writes still keep the sum: a settlement it stops leaves it
        await api.query("UPDATE settlements SET state = 'failed' WHERE id = $1", [a.id]);
        expect(await kept(merchant)).toBe(0n);
      } finally {
        await api.end().catch(() => undefined);
        await db.pool.query(`DROP OWNED BY ${role}`);
        await db.pool.query(`DROP ROLE ${role}`);
      }
    });
  });

  describe('the payer\'s value in flight (accounting)', () => {
    const reserve = (s: SettlementRow, payer: { value: bigint; balance: bigint; maxInFlight?: number; pause?: { afterFailures: number; since: Date } }) =>
      repo.transitionReservingFee(
        { id: s.id, from: 'check_allowance', to: 'collect_fee' },
        { merchant: s.merchant, chainId: s.chainId, tokenAddress: s.tokenAddress, fee: 100n, allowance: 10n ** 12n, balance: 10n ** 12n, payer: { address: s.payer, ...payer } },
      );

    it('reserves a payment only while the payer\'s balance covers it on top of its payments in flight, whatever their merchants', async () => {
      const payer = randomAddress();
      const [a, b, c] = await Promise.all([1, 2, 3].map(() => started({ payer, amount: '600' })));
      const otherPayer = await started({ amount: '600' });
      for (const s of [a, b, c, otherPayer]) await walk(s.id, ['check_allowance']);
      await walk(otherPayer.id, ['collect_fee']);

      const first = await reserve(a, { value: 600n, balance: 1_000n });
      expect(first).toMatchObject({ moved: expect.objectContaining({ id: a.id, state: 'collect_fee' }), payer: { value: 0n, items: 0 } });
      // 600 in flight (another merchant's) + 600 > 1000: refused, nothing moved
      expect(await reserve(b, { value: 600n, balance: 1_000n })).toMatchObject({ moved: null, payer: { value: 600n, items: 1 } });
      expect((await repo.findById(b.id))!.state).toBe('check_allowance');
      // still in flight in fee_collected and executing; released once it ends
      await walk(a.id, ['fee_collected', 'executing']);
      expect(await reserve(b, { value: 600n, balance: 1_000n })).toMatchObject({ moved: null, payer: { value: 600n, items: 1 } });
      await walk(a.id, ['settled']);
      expect(await reserve(b, { value: 600n, balance: 1_000n })).toMatchObject({ moved: expect.objectContaining({ id: b.id }), payer: { value: 0n, items: 0 } });
      // the cap on items in flight (a contract-wallet payer) refuses even when the value fits
      expect(await reserve(c, { value: 1n, balance: 10_000n, maxInFlight: 1 })).toMatchObject({ moved: null, payer: { value: 600n, items: 1 } });
      expect(await reserve(c, { value: 1n, balance: 10_000n, maxInFlight: 2 })).toMatchObject({ moved: expect.objectContaining({ id: c.id }) });
    });

    it('refuses once the payer has its costly failures since the time given, counted under its lock', async () => {
      const payer = randomAddress();
      const failedItem = await started({ payer });
      const failedRow = (await repo.transition({
        id: failedItem.id, from: 'pending', to: 'failed',
        data: { paymentKey: null, errorCode: 'settlement_failed', errorDetails: { reason: 'FiatTokenV2: invalid signature', tx_hash: randomHex(32) } },
      }))!;
      const [s1, s2] = [await started({ payer, amount: '1' }), await started({ payer, amount: '1' })];
      for (const s of [s1, s2]) await walk(s.id, ['check_allowance']);
      const since = new Date(Date.now() - 60_000);
      // one failure, a threshold of two: reserved
      expect(await reserve(s1, { value: 1n, balance: 10n, pause: { afterFailures: 2, since } })).toMatchObject({
        moved: expect.objectContaining({ id: s1.id }),
        payer: { failures: 1, lastFailureAt: failedRow.updatedAt },
      });
      // a threshold of one: refused; failures older than `since` do not count
      expect(await reserve(s2, { value: 1n, balance: 10n, pause: { afterFailures: 1, since } })).toMatchObject({ moved: null, payer: { failures: 1 } });
      expect(await reserve(s2, { value: 1n, balance: 10n, pause: { afterFailures: 1, since: new Date(Date.now() + 1_000) } })).toMatchObject({
        moved: expect.objectContaining({ id: s2.id }),
        payer: { failures: 0, lastFailureAt: null },
      });
    });

    it('lets one balance back only what it covers under concurrency (100 payments, balance for one)', async () => {
      const payer = randomAddress();
      const rows = await Promise.all(Array.from({ length: 100 }, () => started({ payer, amount: '10000' })));
      for (const s of rows) await walk(s.id, ['check_allowance']);
      const results = await Promise.all(rows.map((s) => reserve(s, { value: 10_000n, balance: 10_000n })));
      expect(results.filter((r) => r.moved !== null)).toHaveLength(1);
    });
  });

  describe('failures on chain (accounting)', () => {
    async function failedWith(overrides: Partial<NewSettlementRow>, data: Parameters<AllSettlementReaders['transition']>[0]['data']): Promise<SettlementRow> {
      const s = await started(overrides);
      return (await repo.transition({ id: s.id, from: 'pending', to: 'failed', data: { paymentKey: null, ...data } }))!;
    }

    it('counts per payer and per merchant the failures that cost gas or a kept fee, not the free ones nor fee reverts', async () => {
      const payer = randomAddress();
      const merchant = randomAddress();
      const since = new Date(Date.now() - 60_000);
      // counted: a sequential transfer that reverted on chain, one refused after the fee, an atomic item in a mined transaction
      await failedWith({ payer, merchant }, { errorCode: 'settlement_failed', feeTxHash: randomHex(32), settlementTxHash: randomHex(32) });
      await failedWith({ payer, merchant }, { errorCode: 'settlement_failed', feeTxHash: randomHex(32) });
      const last = await failedWith({ payer }, { errorCode: 'settlement_failed', errorDetails: { reason: 'FiatTokenV2: invalid signature', tx_hash: randomHex(32) } });
      // not counted: nothing sent; a fee revert (the merchant's doing); paid elsewhere; a whole settle transaction reverted; old
      await failedWith({ payer, merchant }, { errorCode: 'settlement_failed', errorDetails: { reason: 'authorization expired' } });
      await failedWith({ payer, merchant }, { errorCode: 'fee_collection_failed', feeTxHash: randomHex(32) });
      await failedWith({ payer, merchant }, { errorCode: 'settlement_failed', merchantPaid: true, errorDetails: { reason: 'executed elsewhere', tx_hash: randomHex(32) } });
      await failedWith({ payer, merchant }, { errorCode: 'settlement_failed', errorDetails: { reason: 'executed elsewhere', merchant_paid: true, tx_hash: randomHex(32) } });
      await failedWith({ payer, merchant }, { errorCode: 'settlement_failed', errorDetails: { reason: 'settle transaction reverted: out of gas', tx_hash: randomHex(32) } });
      const old = await failedWith({ payer, merchant }, { errorCode: 'settlement_failed', settlementTxHash: randomHex(32) });
      await setUpdatedAt(old.id, new Date('2020-01-01T00:00:00.000Z'));

      const counted = await repo.failuresOfPayment(payer, merchant, CHAIN, since);
      expect(counted.payer).toEqual({ count: 3, lastAt: last.updatedAt });
      expect(counted.merchant.count).toBe(2);
      expect((await repo.failuresOfPayment(payer, merchant, 84532, since)).payer.count).toBe(0);
      expect(await repo.failuresOfPayment(randomAddress(), randomAddress(), CHAIN, since)).toEqual({ payer: { count: 0, lastAt: null }, merchant: { count: 0, lastAt: null } });
    });

    it('knows whether a payer has paid a merchant before, and finds the live settlement of a payment', async () => {
      const payer = randomAddress();
      const merchant = randomAddress();
      const s = await started({ payer, merchant });
      expect(await repo.hasPaid(payer, merchant, CHAIN)).toBe(false);
      expect((await repo.findLiveForPayment(s.paymentKey!))?.id).toBe(s.id);
      await walk(s.id, ['check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);
      expect(await repo.hasPaid(payer, merchant, CHAIN)).toBe(true);
      expect(await repo.hasPaid(payer, merchant, 84532)).toBe(false);
      expect(await repo.hasPaid(payer, randomAddress(), CHAIN)).toBe(false);
      expect(await repo.findLiveForPayment('no-such-key')).toBeNull();
    });
  });

  describe('settlements charged no fee (the fee-free budget)', () => {
    it("counts the merchant's and all fee-free settlements created since a time, and no charged one", async () => {
      const since = new Date(Date.now() - 60_000);
      const before = await repo.feeFreeSince(randomAddress(), since);
      const merchant = randomAddress();
      await started({ merchant, feeAmount: '0', amount: '5000' });
      await started({ merchant, feeAmount: '0', amount: '1' });
      const old = await started({ merchant, feeAmount: '0', amount: '2' });
      await db.pool.query("UPDATE settlements SET created_at = now() - interval '2 hours' WHERE id = $1", [old.id]);
      await started({ merchant, feeAmount: '10000', amount: '50000' });
      await started({ feeAmount: '0', amount: '3' });
      expect(await repo.feeFreeSince(merchant, since)).toEqual({ merchant: 2, all: before.all + 3 });
    });
  });

  describe('fee reverts', () => {
    async function failedFee(overrides: Partial<NewSettlementRow>, errorCode: string, feeTxHash: string | null): Promise<SettlementRow> {
      const s = await started(overrides);
      return (await repo.transition({ id: s.id, from: 'pending', to: 'failed', data: { errorCode, feeTxHash, paymentKey: null } }))!;
    }

    it('counts the merchant’s sent-and-reverted fee transfers since a time, with the latest time', async () => {
      const merchant = randomAddress();
      expect(await repo.feeRevertsOfMerchant(merchant, CHAIN, new Date(0))).toEqual({ count: 0, lastAt: null });

      const older = await failedFee({ merchant }, 'fee_collection_failed', randomHex(32));
      await setUpdatedAt(older.id, new Date('2020-01-01T00:00:00.000Z'));
      const a = await failedFee({ merchant }, 'fee_collection_failed', randomHex(32));
      await sleep(5);
      const b = await failedFee({ merchant }, 'fee_collection_failed', randomHex(32));
      await failedFee({ merchant }, 'fee_collection_failed', null);
      await failedFee({ merchant }, 'transfer_reverted', randomHex(32));
      await failedFee({ merchant, chainId: 84532 }, 'fee_collection_failed', randomHex(32));

      const reverts = await repo.feeRevertsOfMerchant(merchant, CHAIN, new Date('2021-01-01T00:00:00.000Z'));
      expect(reverts).toEqual({ count: 2, lastAt: b.updatedAt });
      expect(reverts.lastAt).toBeInstanceOf(Date);
      expect(b.updatedAt.getTime()).toBeGreaterThan(a.updatedAt.getTime());
      expect((await repo.feeRevertsOfMerchant(merchant, CHAIN, new Date(0))).count).toBe(3);
    });

    it('counts the reverted fee transfers of earlier settlements of one payment', async () => {
      const nonce = randomHex(32);
      expect(await repo.feeRevertsOfPayment({ chainId: CHAIN, nonceSpace: USDC, payer: PAYER, nonce })).toEqual({ count: 0, lastAt: null });

      await failedFee({ nonce }, 'fee_collection_failed', randomHex(32));
      await sleep(5);
      const last = await failedFee({ nonce }, 'fee_collection_failed', randomHex(32));
      await failedFee({ nonce }, 'fee_collection_failed', null);
      await failedFee({ nonce, tokenAddress: OTHER_TOKEN }, 'fee_collection_failed', randomHex(32));

      expect(await repo.feeRevertsOfPayment({ chainId: CHAIN, nonceSpace: USDC, payer: PAYER, nonce })).toEqual({ count: 2, lastAt: last.updatedAt });
    });

    it('counts, for a payment, atomic items that failed in a mined settle transaction (our gas was spent on them)', async () => {
      const nonce = randomHex(32);
      const atomicFailure = async (details: object) => {
        const s = await started({ nonce });
        await walk(s.id, ['check_allowance']);
        await repo.transition({ id: s.id, from: 'check_allowance', to: 'collect_fee', data: { settlementMode: 'atomic' } });
        return (await repo.transition({ id: s.id, from: 'collect_fee', to: 'failed', data: { errorCode: 'settlement_failed', errorDetails: details, paymentKey: null } }))!;
      };
      await atomicFailure({ reason: 'nothing sent' });
      const mined = await atomicFailure({ reason: 'FiatTokenV2: transfer amount exceeds balance', tx_hash: randomHex(32) });
      expect(await repo.feeRevertsOfPayment({ chainId: CHAIN, nonceSpace: USDC, payer: PAYER, nonce })).toEqual({ count: 1, lastAt: mined.updatedAt });
    });
  });

  describe('lookups', () => {
    it('findNonceUse finds only a settlement that consumed the nonce or paid the merchant', async () => {
      const nonce = randomHex(32);
      const pending = await started({ nonce });
      await repo.transition({ id: pending.id, from: 'pending', to: 'failed', data: { paymentKey: null } });
      expect(await repo.findNonceUse({ chainId: CHAIN, nonceSpace: USDC, payer: PAYER, nonce })).toBeNull();

      const paid = await started({ nonce });
      const moved = await repo.transition({ id: paid.id, from: 'pending', to: 'failed', data: { paymentKey: null, merchantPaid: true } });
      expect(await repo.findNonceUse({ chainId: CHAIN, nonceSpace: USDC, payer: PAYER, nonce })).toEqual(moved);

      const nonce2 = randomHex(32);
      const executing = await started({ nonce: nonce2 });
      await walk(executing.id, ['check_allowance', 'collect_fee', 'fee_collected', 'executing']);
      expect((await repo.findNonceUse({ chainId: CHAIN, nonceSpace: USDC, payer: PAYER, nonce: nonce2 }))!.id).toBe(executing.id);
      expect(await repo.findNonceUse({ chainId: CHAIN, nonceSpace: OTHER_TOKEN, payer: PAYER, nonce: nonce2 })).toBeNull();
    });

    it('findSettledForVerification finds the settled one only', async () => {
      const s = await started();
      expect(await repo.findSettledForVerification(s.verificationId)).toBeNull();
      const settled = await walk(s.id, ['check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);
      expect(await repo.findSettledForVerification(s.verificationId)).toEqual(settled);
    });

    it('findWithVerification joins the verification, mapped as VerificationRepository maps it', async () => {
      const s = await started({ metadata: { k: 'v' } });
      const found = await repo.findWithVerification(s.id);
      const { verification, ...settlement } = found!;

      expect(settlement).toStrictEqual(s);
      expect(verification).toStrictEqual(await verifications.findById(s.verificationId));
      expect(verification.createdAt).toBeInstanceOf(Date);
      expect(verification.request).toEqual({ paymentRequirements: { amount: TWO_POW_255.toString() } });
      expect(verification.metadata).toBeNull();
      expect(await repo.findWithVerification(newId(IdPrefix.Settlement))).toBeNull();
    });
  });

  describe('markWaiting', () => {
    it('shows a wait on the row, keeps its start while the reason holds, and the next transition clears it', async () => {
      const s = await walk((await started()).id, ['check_allowance', 'collect_fee']);
      const detail = { base_fee_per_gas: '150000000000', max_fee_per_gas_cap: '100000000000' };
      expect(await repo.markWaiting(s.id, 'collect_fee', 'gas_price_above_cap', detail)).toBe(true);
      const first = (await repo.findById(s.id))!;
      expect(first).toMatchObject({ state: 'collect_fee', waitingReason: 'gas_price_above_cap', waitingDetail: detail });
      expect(first.waitingSince).toBeInstanceOf(Date);
      expect((await repo.findByIds([s.id]))[0]).toStrictEqual(first);

      await sleep(20);
      expect(await repo.markWaiting(s.id, 'collect_fee', 'gas_price_above_cap', { ...detail, base_fee_per_gas: '160000000000' })).toBe(true);
      const again = (await repo.findById(s.id))!;
      expect(again.waitingSince).toEqual(first.waitingSince);
      expect(again.waitingDetail).toMatchObject({ base_fee_per_gas: '160000000000' });

      // not from a state it has left
      expect(await repo.markWaiting(s.id, 'fee_collected', 'no_funded_relayer', {})).toBe(false);
      const moved = await repo.transition({ id: s.id, from: 'collect_fee', to: 'fee_collected' });
      expect(moved).toMatchObject({ waitingReason: null, waitingSince: null, waitingDetail: null });
      expect(await repo.markWaiting(s.id, 'fee_collected', 'no_funded_relayer', {})).toBe(true);
      const other = (await repo.findById(s.id))!;
      expect(other.waitingReason).toBe('no_funded_relayer');
      expect(other.waitingSince!.getTime()).toBeGreaterThan(first.waitingSince!.getTime());
    });
  });

  describe('reorg watching', () => {
    it('records finality with a history row and its event in one transaction; changed is never overwritten; final once all is final', async () => {
      const s = await walk((await started()).id, ['check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);
      const reorged = await repo.recordFinality(s.id, { finality: 'reorged', reorg: true, note: { reorg: { purpose: 'fee' } } });
      expect(reorged).toMatchObject({ state: 'settled', finality: 'reorged', reorgCount: 1 });
      const eventId = newId(IdPrefix.WebhookEvent);
      expect(reorged?.merchantPaid).toBe(false);
      const changed = await repo.recordFinality(s.id, { finality: 'changed', note: { outcome_changed: { purpose: 'transfer' } }, merchantPaid: true }, (row) => ({
        id: eventId, eventType: 'settlement.reorged', verificationId: row.verificationId, settlementId: row.id, url: 'https://m.example/h', mac: 'test-mac', payload: { finality: row.finality },
      }));
      // the row keeps what the merchant is told now; a record that tells nothing of it leaves it
      expect(changed).toMatchObject({ finality: 'changed', reorgCount: 1, merchantPaid: true });
      expect(await db.prisma.webhookEvent.findUnique({ where: { id: eventId } })).toMatchObject({ eventType: 'settlement.reorged', payload: { finality: 'changed' } });
      expect(await repo.recordFinality(s.id, { finality: 'reorged', note: { reincluded: { purpose: 'fee' } } })).toMatchObject({ finality: 'changed', merchantPaid: true });
      expect((await history(s.id)).slice(-3).map((h) => [h.fromState, h.toState, Object.keys(h.note as object)[0]])).toEqual([
        ['settled', 'settled', 'reorg'],
        ['settled', 'settled', 'outcome_changed'],
        ['settled', 'settled', 'reincluded'],
      ]);
      // a changed one stays changed; an ended one with nothing left to watch becomes final, a live one does not
      const other = await walk((await started()).id, ['check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);
      const live = await walk((await started()).id, ['check_allowance']);
      expect(await repo.markFinalWhereSettled()).toBeGreaterThanOrEqual(1);
      expect((await repo.findById(other.id))!.finality).toBe('final');
      expect((await repo.findById(s.id))!.finality).toBe('changed');
      expect((await repo.findById(live.id))!.finality).toBeNull();
      expect(await repo.recordFinality(newId(IdPrefix.Settlement), { note: {} })).toBeNull();
    });
  });

  describe('a payment another transaction executed (settlement_foreign_executions)', () => {
    it('stores its block with the transition to settled, keeps the settlement from final until the watcher marks it, and moves it after a reorg', async () => {
      const s = await started();
      const theirs = randomHex(32);
      const moved = await repo.transition({
        id: s.id,
        from: 'pending',
        to: 'settled',
        data: { settlementTxHash: theirs, merchantPaid: true, settledAt: new Date(), foreignExecution: { txHash: theirs, blockNumber: 1234, blockHash: randomHex(32) } },
      });
      expect(moved).toMatchObject({ state: 'settled', settlementTxHash: theirs });
      const watched = (await repo.foreignExecutionsAwaitingFinality(CHAIN, 10_000)).find((f) => f.settlementId === s.id);
      expect(watched).toMatchObject({ txHash: theirs, blockNumber: 1234 });
      // nothing of ours to watch, yet not final while their transaction is watched
      await repo.markFinalWhereSettled();
      expect((await repo.findById(s.id))!.finality).toBeNull();

      const again = randomHex(32);
      const block = randomHex(32);
      await repo.moveForeignExecution(s.id, { txHash: again, blockNumber: 1240, blockHash: block });
      expect((await repo.findById(s.id))!.settlementTxHash).toBe(again);
      expect((await repo.foreignExecutionsAwaitingFinality(CHAIN, 10_000)).find((f) => f.settlementId === s.id)).toEqual({ settlementId: s.id, txHash: again, blockNumber: 1240, blockHash: block });

      await repo.markForeignExecutionFinal(s.id);
      expect((await repo.foreignExecutionsAwaitingFinality(CHAIN, 10_000)).some((f) => f.settlementId === s.id)).toBe(false);
      await repo.markFinalWhereSettled();
      expect((await repo.findById(s.id))!.finality).toBe('final');
    });

    it("counts toward its merchant's failure pause when ours was sent first and no fee of ours was taken (a front-run of our batch), not otherwise", async () => {
      const merchant = randomAddress();
      const settledElsewhere = async (note: Record<string, unknown>, feeCollectedAt?: Date) => {
        const s = await started({ merchant });
        const theirs = randomHex(32);
        return repo.transition({
          id: s.id,
          from: 'pending',
          to: 'settled',
          note,
          data: { settlementTxHash: theirs, merchantPaid: true, ...(feeCollectedAt ? { feeCollectedAt } : {}), foreignExecution: { txHash: theirs, blockNumber: 9, blockHash: randomHex(32) } },
        });
      };
      // found by the pre-flight before anything of ours was sent: it cost us nothing
      await settledElsewhere({ executed_by_third_party: true });
      // after our fee was collected: the merchant paid for our gas
      await settledElsewhere({ executed_by_third_party: true, our_tx_hash: randomHex(32) }, new Date());
      expect(await repo.feeRevertsOfMerchant(merchant, CHAIN, new Date(0))).toEqual({ count: 0, lastAt: null });
      // ahead of our batch, in its block: our gas spent, no fee
      await settledElsewhere({ executed_by_third_party: true, our_tx_hash: randomHex(32) });
      await settledElsewhere({ executed_by_third_party: true, our_tx_hash: randomHex(32) });
      const counted = await repo.feeRevertsOfMerchant(merchant, CHAIN, new Date(0));
      expect(counted.count).toBe(2);
      expect(counted.lastAt).toBeInstanceOf(Date);
      expect((await repo.feeRevertsOfMerchant(merchant, CHAIN, new Date(Date.now() + 60_000))).count).toBe(0);
      expect((await repo.feeRevertsOfMerchant(randomAddress(), CHAIN, new Date(0))).count).toBe(0);
    });

    it('is no longer watched once its merchant was told the outcome changed', async () => {
      const s = await started();
      const theirs = randomHex(32);
      await repo.transition({ id: s.id, from: 'pending', to: 'settled', data: { settlementTxHash: theirs, merchantPaid: true, foreignExecution: { txHash: theirs, blockNumber: 7, blockHash: randomHex(32) } } });
      await repo.recordFinality(s.id, { finality: 'changed', note: {}, merchantPaid: false });
      expect((await repo.foreignExecutionsAwaitingFinality(CHAIN, 10_000)).some((f) => f.settlementId === s.id)).toBe(false);
    });
  });

  describe('attention', () => {
    it('parks, lists oldest first, counts and clears settlements needing attention', async () => {
      const countBefore = await repo.countNeedingAttention();
      const a = await started();
      const b = await started();
      await repo.markNeedsAttention(a.id, 'x'.repeat(1_500));
      await sleep(5);
      await repo.markNeedsAttention(b.id, 'nonce unknown');

      const parkedA = (await repo.findById(a.id))!;
      expect(parkedA.attentionReason).toBe('x'.repeat(1_000));
      expect(parkedA.attentionAt).toBeInstanceOf(Date);
      expect((await repo.findByIds([a.id]))[0].attentionAt).toEqual(parkedA.attentionAt);
      expect(await repo.countNeedingAttention()).toBe(countBefore + 2);

      const listed = (await repo.findNeedingAttention(1_000)).map((s) => s.id);
      expect(listed.indexOf(a.id)).toBeGreaterThanOrEqual(0);
      expect(listed.indexOf(a.id)).toBeLessThan(listed.indexOf(b.id));
      expect(await repo.findNeedingAttention(1)).toHaveLength(1);

      const cleared = await repo.clearAttention(a.id);
      expect(cleared).toMatchObject({ id: a.id, attentionReason: null, attentionAt: null });
      expect(await repo.countNeedingAttention()).toBe(countBefore + 1);
      expect(await repo.clearAttention(newId(IdPrefix.Settlement))).toBeNull();
    });
  });

  describe('findStale', () => {
    it('finds unfinished, unparked settlements not moved since a time, oldest first', async () => {
      const oldest = await started();
      const old = await started();
      const settled = await started();
      const failed = await started();
      const parked = await started();
      const recent = await started();
      await walk(settled.id, ['check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled']);
      await repo.transition({ id: failed.id, from: 'pending', to: 'failed', data: { paymentKey: null } });
      await repo.markNeedsAttention(parked.id, 'stuck');
      await setUpdatedAt(oldest.id, new Date('2001-01-01T00:00:00.000Z'));
      for (const s of [old, settled, failed, parked]) await setUpdatedAt(s.id, new Date('2001-01-02T00:00:00.000Z'));

      const stale = await repo.findStale(new Date('2001-02-01T00:00:00.000Z'), 10);
      expect(stale.map((s) => s.id)).toEqual([oldest.id, old.id]);
      expect(stale[0].updatedAt).toEqual(new Date('2001-01-01T00:00:00.000Z'));
      expect((await repo.findStale(new Date('2001-02-01T00:00:00.000Z'), 1)).map((s) => s.id)).toEqual([oldest.id]);
      expect((await repo.findStale(new Date('2001-01-01T12:00:00.000Z'), 10)).map((s) => s.id)).toEqual([oldest.id]);
      expect(recent.updatedAt.getTime()).toBeGreaterThan(Date.UTC(2001, 1, 1));
    });
  });
});

describe("a merchant's settlements (the merchant page)", () => {
  it('pages newest first without skipping or repeating rows made in the same millisecond, and only its own', async () => {
    const merchant = randomAddress();
    const mine = await Promise.all(Array.from({ length: 5 }, () => started({ merchant })));
    await started();
    // three of them share one created_at: the id breaks the tie
    const tie = new Date('2030-01-01T00:00:00.000Z');
    await db.pool.query('UPDATE settlements SET created_at = $2 WHERE id = ANY($1)', [mine.slice(0, 3).map((s) => s.id), tie]);
    await db.pool.query('UPDATE settlements SET created_at = $2 WHERE id = $1', [mine[3].id, new Date('2030-01-02T00:00:00.000Z')]);
    await db.pool.query('UPDATE settlements SET created_at = $2 WHERE id = $1', [mine[4].id, new Date('2029-12-31T00:00:00.000Z')]);
    const expected = [mine[3].id, ...mine.slice(0, 3).map((s) => s.id).sort().reverse(), mine[4].id];

    const seen: string[] = [];
    let before: { createdAt: Date; id: string } | undefined;
    for (let page = 0; page < 5; page += 1) {
      const rows = await repo.pageOfMerchant(merchant, 2, before);
      seen.push(...rows.map((r) => r.id));
      if (rows.length < 2) break;
      before = { createdAt: rows[1].createdAt, id: rows[1].id };
    }
    expect(seen).toEqual(expected);
  });

  it('sums the fees collected from the merchant, and only those', async () => {
    const merchant = randomAddress();
    const [paid, unpaid] = await Promise.all([started({ merchant }), started({ merchant })]);
    await db.pool.query("UPDATE settlements SET fee_collected_at = now(), fee_amount = '12345' WHERE id = $1", [paid.id]);
    expect(unpaid.feeCollectedAt).toBeNull();
    expect(await repo.feesOfMerchant(merchant)).toEqual({ total: '12345', count: 1 });
    expect(await repo.feesOfMerchant(randomAddress())).toEqual({ total: '0', count: 0 });
  });
});
