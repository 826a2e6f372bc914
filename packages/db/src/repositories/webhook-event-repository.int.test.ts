// Round trip of WebhookEventRepository against a real, migrated Postgres: events stored (through Prisma and
// through a pg client in another repository's transaction), their attempts recorded, and both read back.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdPrefix, newId } from '@facilitator/core';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { allSettlementReaders, type AllSettlementReaders } from '../testing/all-settlement-readers';
import { VerificationRepository } from './verification-repository';
import { WebhookEventRepository, type WebhookEventRow } from './webhook-event-repository';

let db: TestDatabase;
let repo: WebhookEventRepository;
let verifications: VerificationRepository;
let settlements: AllSettlementReaders;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new WebhookEventRepository(db.prisma, db.pool);
  verifications = new VerificationRepository(db.pool);
  settlements = allSettlementReaders(db.prisma, db.pool);
});

afterAll(async () => {
  await db?.drop();
});

const USDC = '0x833589fcd6e4b24b4be8d3bb2a5ec2a7c3b7a8b0';
const PAYER = '0x1111111111111111111111111111111111111111';
const TWO_POW_255 = (2n ** 255n).toString();
const address = () => `0x${randomBytes(20).toString('hex')}`;

/** A verification (verified, or rejected) paying `merchant`; returns its id. */
async function verification(merchant: string | null = address(), status: 'verified' | 'rejected' = 'verified'): Promise<string> {
  const id = newId(IdPrefix.Verification);
  await verifications.create({
    id,
    status,
    mechanism: 'exact/eip3009',
    scheme: 'exact',
    protocolVersion: 2,
    surface: 'x402',
    chainId: 8453,
    network: 'eip155:8453',
    networkName: 'eip155:8453',
    tokenAddress: USDC,
    payer: PAYER,
    merchant,
    amount: '1000000',
    nonce: `0x${randomBytes(32).toString('hex')}`,
    request: status === 'verified' ? {} : null,
  });
  return id;
}

async function settlementOf(verificationId: string): Promise<string> {
  const id = newId(IdPrefix.Settlement);
  await settlements.createOrGetForPayment({
    id,
    verificationId,
    paymentKey: `key:${id}`,
    authorizationFingerprint: id,
    mechanism: 'exact/eip3009',
    scheme: 'exact',
    nonceSpace: USDC,
    payload: null,
    surface: 'x402',
    chainId: 8453,
    network: 'eip155:8453',
    tokenAddress: USDC,
    payer: PAYER,
    merchant: address(),
    amount: '1000000',
    nonce: `0x${randomBytes(32).toString('hex')}`,
    feeAmount: '1000',
  });
  return id;
}

function eventRow(verificationId: string, settlementId: string | null = null, overrides: Partial<WebhookEventRow> = {}): WebhookEventRow {
  return {
    id: newId(IdPrefix.WebhookEvent),
    eventType: settlementId ? 'settlement.settled' : 'verification.verified',
    verificationId,
    settlementId,
    url: 'https://merchant.example/hooks?x=1',
    mac: 'a-mac',
    payload: { type: 'settlement.settled', data: { amount: TWO_POW_255, tags: ['a'], nothing: null } },
    ...overrides,
  };
}

/** An event stored through insertWith on a client of the pool, as AllSettlementReaders does in its transaction. */
async function insertWithClient(row: WebhookEventRow): Promise<void> {
  const client = await db.pool.connect();
  try {
    await WebhookEventRepository.insertWith(client, row);
  } finally {
    client.release();
  }
}

describe('WebhookEventRepository', () => {
  it('stores an event and reads it back with every field, through both readers', async () => {
    const merchant = address();
    const verificationId = await verification(merchant);
    const settlementId = await settlementOf(verificationId);
    // the merchant is stored lowercase: the merchant page lists its deliveries by it
    const row = eventRow(verificationId, settlementId, { merchant: merchant.toUpperCase().replace('0X', '0x') });
    const before = Date.now();
    await repo.insert(row);

    const withAttempts = await repo.findWithAttempts(row.id);
    expect(withAttempts).toStrictEqual({
      id: row.id,
      eventType: 'settlement.settled',
      verificationId,
      settlementId,
      merchant: merchant.toLowerCase(),
      url: 'https://merchant.example/hooks?x=1',
      payload: row.payload,
      mac: 'a-mac',
      status: 'pending',
      attemptCount: 0,
      deliveredAt: null,
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
      attempts: [],
    });
    expect(Math.abs(withAttempts!.createdAt.getTime() - before)).toBeLessThan(5_000);

    const { attempts: _attempts, ...event } = withAttempts!;
    expect(await repo.findWithMerchant(row.id)).toStrictEqual({ ...event, verification: { merchant } });
  });

  it('insertWith (inside another repository’s transaction) stores the same row as insert', async () => {
    const verificationId = await verification();
    const viaPrisma = eventRow(verificationId);
    const viaClient = eventRow(verificationId);
    await repo.insert(viaPrisma);
    await insertWithClient(viaClient);

    const a = await repo.findWithMerchant(viaPrisma.id);
    const b = await repo.findWithMerchant(viaClient.id);
    expect(b).toStrictEqual({ ...a, id: viaClient.id, createdAt: expect.any(Date), updatedAt: expect.any(Date) });
    expect(b!.mac).toBe('a-mac');
    expect(b!.settlementId).toBeNull();
    expect(b!.createdAt).toBeInstanceOf(Date);
    expect(await repo.findWithAttempts(viaClient.id)).toMatchObject({ settlementId: null, payload: viaClient.payload, attempts: [] });
  });

  it('reads the merchant as null when the payment had none, and the verification as null when it is gone', async () => {
    const noMerchant = eventRow(await verification(null));
    await repo.insert(noMerchant);
    expect((await repo.findWithMerchant(noMerchant.id))!.verification).toStrictEqual({ merchant: null });

    const orphan = eventRow(await verification());
    await repo.insert(orphan);
    // the foreign key is ON DELETE SET NULL: what an event looks like after its verification was deleted
    await db.pool.query('UPDATE webhook_events SET verification_id = NULL WHERE id = $1', [orphan.id]);
    expect(await repo.findWithMerchant(orphan.id)).toMatchObject({ verificationId: null, verification: null });
  });

  it('finds nothing for an unknown id', async () => {
    expect(await repo.findWithMerchant(newId(IdPrefix.WebhookEvent))).toBeNull();
    expect(await repo.findWithAttempts(newId(IdPrefix.WebhookEvent))).toBeNull();
  });

  describe('recordAttempt', () => {
    it('stores each attempt and moves the event: pending stays pending, then delivered', async () => {
      const row = eventRow(await verification());
      await repo.insert(row);
      const stored = (await repo.findWithMerchant(row.id))!;
      await sleep(5);

      await repo.recordAttempt({ eventId: row.id, number: 1, error: 'timeout', durationMs: 10_000, eventStatus: 'pending' });
      const afterFirst = (await repo.findWithMerchant(row.id))!;
      expect(afterFirst).toMatchObject({ status: 'pending', attemptCount: 1, deliveredAt: null });
      expect(afterFirst.updatedAt.getTime()).toBeGreaterThan(stored.updatedAt.getTime());

      await repo.recordAttempt({ eventId: row.id, number: 2, statusCode: 200, durationMs: 35, eventStatus: 'delivered' });
      const delivered = (await repo.findWithAttempts(row.id))!;
      expect(delivered).toMatchObject({ status: 'delivered', attemptCount: 2 });
      expect(delivered.deliveredAt).toBeInstanceOf(Date);
      expect(Math.abs(delivered.deliveredAt!.getTime() - Date.now())).toBeLessThan(5_000);
      expect(delivered.attempts).toStrictEqual([
        { id: expect.any(BigInt), eventId: row.id, number: 1, at: expect.any(Date), statusCode: null, error: 'timeout', durationMs: 10_000 },
        { id: expect.any(BigInt), eventId: row.id, number: 2, at: expect.any(Date), statusCode: 200, error: null, durationMs: 35 },
      ]);
      expect((await repo.findWithMerchant(row.id))!.deliveredAt).toEqual(delivered.deliveredAt);
    });

    it('marks an event failed for good, with its last attempt', async () => {
      const row = eventRow(await verification());
      await repo.insert(row);
      await repo.recordAttempt({ eventId: row.id, number: 1, statusCode: 500, error: 'http_500', durationMs: 12, eventStatus: 'failed' });

      const failed = (await repo.findWithAttempts(row.id))!;
      expect(failed).toMatchObject({ status: 'failed', attemptCount: 1, deliveredAt: null });
      expect(failed.attempts.map((a) => [a.number, a.statusCode, a.error])).toEqual([[1, 500, 'http_500']]);
    });

    it('lists attempts in the order of their number, whatever order they were recorded in', async () => {
      const row = eventRow(await verification());
      await repo.insert(row);
      for (const number of [3, 1, 2]) await repo.recordAttempt({ eventId: row.id, number, error: 'refused', durationMs: number, eventStatus: 'pending' });
      const event = (await repo.findWithAttempts(row.id))!;
      expect(event.attempts.map((a) => a.number)).toEqual([1, 2, 3]);
      expect(event.attemptCount).toBe(3);
    });
  });

  describe('list', () => {
    it('lists the events of a verification or a settlement, oldest first, with their attempts, up to the limit', async () => {
      const merchant = address();
      const verificationId = await verification(merchant);
      const settlementId = await settlementOf(verificationId);
      const first = eventRow(verificationId);
      const second = eventRow(verificationId, settlementId);
      const third = eventRow(verificationId, settlementId);
      for (const row of [first, second, third]) {
        await repo.insert(row);
        await sleep(5);
      }
      await repo.insert(eventRow(await verification(merchant)));
      await repo.recordAttempt({ eventId: second.id, number: 1, statusCode: 204, durationMs: 3, eventStatus: 'delivered' });

      const ofVerification = await repo.list({ verificationId }, 10);
      expect(ofVerification.map((e) => e.id)).toEqual([first.id, second.id, third.id]);
      expect(ofVerification[1]).toMatchObject({ status: 'delivered', attempts: [expect.objectContaining({ number: 1, statusCode: 204 })] });
      expect(ofVerification[0].attempts).toEqual([]);

      expect((await repo.list({ settlementId }, 10)).map((e) => e.id)).toEqual([second.id, third.id]);
      expect((await repo.list({ verificationId }, 2)).map((e) => e.id)).toEqual([first.id, second.id]);
    });

    it('with a merchant, lists only that merchant’s own events', async () => {
      const merchant = address();
      const verificationId = await verification(merchant);
      const own = eventRow(verificationId);
      await repo.insert(own);

      expect((await repo.list({ verificationId, merchant }, 10)).map((e) => e.id)).toEqual([own.id]);
      expect(await repo.list({ verificationId, merchant: address() }, 10)).toEqual([]);
      const ofMerchant = await repo.list({ merchant }, 10);
      expect(ofMerchant.map((e) => e.id)).toEqual([own.id]);
    });
  });

  describe('reopenFailed', () => {
    it('moves a failed event back to pending, and nothing else', async () => {
      const failed = eventRow(await verification());
      const pending = eventRow(await verification());
      const delivered = eventRow(await verification());
      for (const row of [failed, pending, delivered]) await repo.insert(row);
      await repo.recordAttempt({ eventId: failed.id, number: 1, error: 'timeout', durationMs: 1, eventStatus: 'failed' });
      await repo.recordAttempt({ eventId: delivered.id, number: 1, statusCode: 200, durationMs: 1, eventStatus: 'delivered' });

      expect(await repo.reopenFailed(failed.id)).toBe(true);
      expect(await repo.findWithAttempts(failed.id)).toMatchObject({ status: 'pending', attemptCount: 1 });
      expect(await repo.reopenFailed(failed.id)).toBe(false);
      expect(await repo.reopenFailed(pending.id)).toBe(false);
      expect(await repo.reopenFailed(delivered.id)).toBe(false);
      expect((await repo.findWithAttempts(delivered.id))!.status).toBe('delivered');
      expect(await repo.reopenFailed(newId(IdPrefix.WebhookEvent))).toBe(false);
    });
  });

  describe('findStalePending', () => {
    it('finds pending events untouched since a time, up to the limit', async () => {
      const old = eventRow(await verification());
      const oldDelivered = eventRow(await verification());
      const recent = eventRow(await verification());
      for (const row of [old, oldDelivered, recent]) await repo.insert(row);
      await repo.recordAttempt({ eventId: oldDelivered.id, number: 1, statusCode: 200, durationMs: 1, eventStatus: 'delivered' });
      await db.pool.query(`UPDATE webhook_events SET updated_at = '2001-01-01T00:00:00Z' WHERE id = ANY($1::text[])`, [[old.id, oldDelivered.id]]);

      const stale = await repo.findStalePending(new Date('2002-01-01T00:00:00Z'), 10);
      expect(stale.map((e) => e.id)).toEqual([old.id]);
      expect(stale[0]).toMatchObject({ status: 'pending', updatedAt: new Date('2001-01-01T00:00:00Z') });
      expect(await repo.findStalePending(new Date('2002-01-01T00:00:00Z'), 0)).toEqual([]);
    });
  });
});
