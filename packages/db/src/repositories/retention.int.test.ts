// Retention on a real, migrated Postgres: for each rule of the retention job (apps/worker's
// runRetention), through the repositories that own the tables, what is deleted and what is KEPT.
import { randomBytes } from 'node:crypto';
import { IdPrefix, newId } from '@facilitator/core';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import type { SettlementState } from '../generated/prisma/client';
import { IdempotencyRepository } from './idempotency-repository';
import { MerchantRepository } from './merchant-repository';
import { PaymentIdentifierRepository } from './payment-identifier-repository';
import { SettlementBatchRepository } from './settlement-batch-repository';
import { allSettlementReaders, type AllSettlementReaders } from '../testing/all-settlement-readers';
import { RETENTION_START, VerificationRepository, type RetentionCursor, type RetentionPage } from './verification-repository';
import { WebhookEventRepository } from './webhook-event-repository';

let db: TestDatabase;
let verifications: VerificationRepository;
let settlements: AllSettlementReaders;
let events: WebhookEventRepository;
let batches: SettlementBatchRepository;
let merchants: MerchantRepository;
let keys: IdempotencyRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  verifications = new VerificationRepository(db.pool);
  settlements = allSettlementReaders(db.prisma, db.pool);
  events = new WebhookEventRepository(db.prisma, db.pool);
  batches = new SettlementBatchRepository(db.pool);
  merchants = new MerchantRepository(db.pool);
  keys = new IdempotencyRepository(db.prisma);
});

afterAll(async () => {
  await db?.drop();
});

const DAY = 86_400_000;
const USDC = '0x833589fcd6e4b24b4be8d3bb2a5ec2a7c3b7a8b0';
const MAX_UINT256 = (2n ** 256n - 1n).toString();
const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
const address = () => hex(20);
const nowSeconds = () => Math.floor(Date.now() / 1000);
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

/** A verification made `ageDays` ago whose authorization is valid until `validBefore` (unix seconds). */
async function verification(opts: { ageDays: number; validBefore: bigint | string; status?: 'verified' | 'rejected'; merchant?: string }): Promise<string> {
  const id = newId(IdPrefix.Verification);
  await verifications.create({
    id,
    status: 'verified',
    mechanism: 'exact/eip3009',
    scheme: 'exact',
    protocolVersion: 2,
    surface: 'v1',
    chainId: 8453,
    network: 'eip155:8453',
    networkName: 'eip155:8453',
    tokenAddress: USDC,
    payer: address(),
    merchant: opts.merchant ?? address(),
    amount: '1000000',
    expectedAmount: '1000000',
    nonce: hex(32),
    validAfter: '0',
    validBefore: opts.validBefore.toString(),
    signature: hex(65),
    request: { x: 1 },
    metadata: null,
    webhookUrl: 'https://merchant.example/hooks',
  });
  if (opts.status === 'rejected') await verifications.reject(id, 'no', {});
  await db.pool.query('UPDATE verifications SET created_at = $2 WHERE id = $1', [id, daysAgo(opts.ageDays)]);
  return id;
}

/** An event of the verification (or of its settlement) with one delivery attempt. */
async function eventOf(verificationId: string, settlementId: string | null = null): Promise<string> {
  const id = newId(IdPrefix.WebhookEvent);
  await events.insert({ id, eventType: settlementId ? 'settlement.failed' : 'verification.verified', verificationId, settlementId, url: 'https://m.example/h', mac: 'test-mac', payload: {} });
  await events.recordAttempt({ eventId: id, number: 1, statusCode: 500, error: 'http_500', durationMs: 3, eventStatus: 'pending' });
  return id;
}

/** A settlement of the verification in `state`, last changed `ageDays` ago, with its first history row. */
async function settlementOf(verificationId: string, state: SettlementState, ageDays: number, extra: { feeCollected?: boolean; merchantPaid?: boolean; attention?: boolean; merchant?: string; paidElsewhere?: boolean } = {}): Promise<string> {
  const v = (await verifications.findById(verificationId))!;
  const id = newId(IdPrefix.Settlement);
  await db.prisma.settlement.create({
    data: {
      id,
      verificationId,
      surface: 'v1',
      state,
      chainId: v.chainId,
      network: v.network,
      tokenAddress: v.tokenAddress!,
      nonceSpace: v.nonceSpace!,
      payer: v.payer!,
      merchant: extra.merchant ?? v.merchant!,
      amount: v.amount!,
      nonce: v.nonce!,
      feeAmount: '10000',
      feeCollectedAt: extra.feeCollected ? daysAgo(ageDays) : null,
      merchantPaid: extra.merchantPaid ?? false,
      attentionReason: extra.attention ? 'money state unknown' : null,
      attentionAt: extra.attention ? daysAgo(ageDays) : null,
      // someone else's transaction used the authorization: the merchant was paid, with no fee
      ...(extra.paidElsewhere ? { errorCode: 'settlement_failed', errorDetails: { executed_by_third_party: true, authorization_used_by: '0x' + 'ab'.repeat(32) } } : {}),
      transitions: { create: [{ fromState: null, toState: 'pending' }, { fromState: 'pending', toState: state }] },
    },
  });
  await db.pool.query('UPDATE settlements SET updated_at = $2 WHERE id = $1', [id, daysAgo(ageDays)]);
  return id;
}

/** Every page of a walk, from the start. */
async function walkAll(page: (after: RetentionCursor) => Promise<RetentionPage>): Promise<string[]> {
  const ids: string[] = [];
  for (let after: RetentionCursor | null = RETENTION_START; after; ) {
    const result: RetentionPage = await page(after);
    ids.push(...result.ids);
    after = result.next;
  }
  return ids;
}

const exists = async (table: string, column: string, value: string) =>
  Number((await db.pool.query(`SELECT count(*) AS n FROM ${table} WHERE ${column} = $1`, [value])).rows[0].n) > 0;

describe('verified verifications never settled', () => {
  // what the job asks: validBefore a day ago at the latest, or made more than 30 days ago
  const rule = () => ({ validBefore: BigInt(nowSeconds() - 86_400), createdBefore: daysAgo(30) });

  it('deletes those that can never settle (authorization expired past the margin, or older than the cap) with their events; keeps the rest', async () => {
    const expired = await verification({ ageDays: 3, validBefore: BigInt(nowSeconds() - 2 * 86_400) });
    const expiredEvent = await eventOf(expired);
    const tooOld = await verification({ ageDays: 31, validBefore: MAX_UINT256 });
    // kept: still settleable, expired within the margin, settled, a settlement on its way, rejected (its own rule)
    const settleable = await verification({ ageDays: 1, validBefore: BigInt(nowSeconds() + 3600) });
    const withinMargin = await verification({ ageDays: 1, validBefore: BigInt(nowSeconds() - 3600) });
    const settled = await verification({ ageDays: 40, validBefore: BigInt(nowSeconds() - 30 * 86_400) });
    await settlementOf(settled, 'settled', 39);
    const settling = await verification({ ageDays: 3, validBefore: BigInt(nowSeconds() - 2 * 86_400) });
    await settlementOf(settling, 'executing', 0);
    const rejected = await verification({ ageDays: 40, validBefore: BigInt(nowSeconds() - 30 * 86_400), status: 'rejected' });

    const found = await walkAll((after) => verifications.unsettledPage(rule(), after, 1000));
    expect(found).toEqual(expect.arrayContaining([expired, tooOld]));
    for (const kept of [settleable, withinMargin, settled, settling, rejected]) expect(found).not.toContain(kept);

    expect(await events.deleteOfVerifications([expired, tooOld])).toBe(1);
    expect(await verifications.deleteUnreferenced([expired, tooOld])).toBe(2);
    expect(await verifications.findById(expired)).toBeNull();
    expect(await verifications.findById(tooOld)).toBeNull();
    expect(await exists('webhook_events', 'id', expiredEvent)).toBe(false);
    expect(await exists('webhook_attempts', 'event_id', expiredEvent)).toBe(false);
    for (const kept of [settleable, withinMargin, settled, settling, rejected]) expect(await verifications.findById(kept)).not.toBeNull();
  });

  it('walks oldest first in pages after a cursor, so kept rows are read once per run', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await verification({ ageDays: 1000 + (5 - i), validBefore: '0' }));
    const first = await verifications.unsettledPage(rule(), RETENTION_START, 2);
    expect(first.ids).toEqual(ids.slice(0, 2));
    expect(first.next).not.toBeNull();
    const second = await verifications.unsettledPage(rule(), first.next!, 2);
    expect(second.ids).toEqual(ids.slice(2, 4));
    const third = await verifications.unsettledPage(rule(), second.next!, 2);
    expect(third.ids[0]).toBe(ids[4]);
  });

  it('keeps a row a settlement or an event came to refer to after the page was read', async () => {
    const id = await verification({ ageDays: 40, validBefore: '1' });
    await settlementOf(id, 'pending', 0);
    const other = await verification({ ageDays: 40, validBefore: '1' });
    await eventOf(other);
    expect(await verifications.deleteUnreferenced([id, other])).toBe(0);
    expect(await verifications.deleteUnreferenced([])).toBe(0);
  });
});

describe('rejected verifications', () => {
  it('pages those made before the cutoff; deleting them takes their events first', async () => {
    const old = await verification({ ageDays: 31, validBefore: MAX_UINT256, status: 'rejected' });
    const oldEvent = await eventOf(old);
    const recent = await verification({ ageDays: 29, validBefore: MAX_UINT256, status: 'rejected' });
    const verified = await verification({ ageDays: 31, validBefore: MAX_UINT256 });
    const found = await walkAll((after) => verifications.rejectedPage(daysAgo(30), after, 1000));
    expect(found).toContain(old);
    expect(found).not.toContain(recent);
    expect(found).not.toContain(verified);
    expect(await verifications.deleteUnreferenced([old])).toBe(0); // its event still refers to it
    await events.deleteOfVerifications([old]);
    expect(await verifications.deleteUnreferenced([old])).toBe(1);
    expect(await exists('webhook_events', 'id', oldEvent)).toBe(false);
  });
});

describe('failed settlements', () => {
  it('deletes those that moved no money, failed before the cutoff, with their history, events, attempts and batch items; keeps the merchant records', async () => {
    const expiredValidity = BigInt(nowSeconds() - 100 * DAY / 1000);
    const make = (state: SettlementState, ageDays: number, extra = {}) =>
      verification({ ageDays: ageDays + 1, validBefore: expiredValidity }).then((v) => settlementOf(v, state, ageDays, extra).then((s) => ({ v, s })));
    // placed in a batch while live (a batch claims only live settlements), then failed
    const doomed = await make('collect_fee', 91);
    const batch = await batches.create({ chainId: 8453, relayer: address(), to: address(), data: '0x', gasCap: 1n, settlementIds: [doomed.s] });
    if ('stored' in batch) throw new Error('the batch was not stored');
    await db.pool.query(`UPDATE settlements SET state = 'failed' WHERE id = $1`, [doomed.s]);
    const doomedEvent = await eventOf(doomed.v, doomed.s);
    // kept: failed lately, settled, failed after its fee was collected, failed with the merchant paid, waiting for an operator
    const recent = await make('failed', 89);
    const settled = await make('settled', 400);
    const settledEvent = await eventOf(settled.v, settled.s);
    const feeKept = await make('failed', 400, { feeCollected: true });
    const paid = await make('failed', 400, { merchantPaid: true });
    const parked = await make('failed', 400, { attention: true });
    const paidElsewhere = await make('failed', 400, { paidElsewhere: true });

    const found = await walkAll((after) => settlements.failedPage(daysAgo(90), after, 1000));
    expect(found).toContain(doomed.s);
    for (const kept of [recent, settled, feeKept, paid, parked, paidElsewhere]) expect(found).not.toContain(kept.s);

    // the job's order: events, batch items, then the settlement (one left keeps it)
    expect(await settlements.deleteFailed([doomed.s])).toBe(0);
    expect(await events.deleteOfSettlements([doomed.s])).toBe(1);
    expect(await settlements.deleteFailed([doomed.s])).toBe(0);
    expect(await batches.deleteItemsOfFailed([doomed.s, settled.s])).toBe(1);
    expect(await settlements.deleteFailed([doomed.s, settled.s, feeKept.s, paid.s, parked.s, paidElsewhere.s])).toBe(1);

    expect(await settlements.findById(doomed.s)).toBeNull();
    expect(await exists('settlement_transitions', 'settlement_id', doomed.s)).toBe(false);
    expect(await exists('webhook_events', 'id', doomedEvent)).toBe(false);
    expect(await exists('webhook_attempts', 'event_id', doomedEvent)).toBe(false);
    expect(await exists('settlement_batch_items', 'settlement_id', doomed.s)).toBe(false);
    expect(await exists('settlement_batches', 'id', batch.id)).toBe(true); // the gas ledger stays
    for (const kept of [recent, settled, feeKept, paid, parked, paidElsewhere]) {
      expect(await settlements.findById(kept.s)).not.toBeNull();
      expect(await exists('settlement_transitions', 'settlement_id', kept.s)).toBe(true);
    }
    expect(await exists('webhook_events', 'id', settledEvent)).toBe(true);

    // its verification, expired and now referred to by nothing, goes with the next walk of unsettled ones
    const rule = { validBefore: BigInt(nowSeconds() - 86_400), createdBefore: daysAgo(30) };
    const unsettled = await walkAll((after) => verifications.unsettledPage(rule, after, 1000));
    expect(unsettled).toContain(doomed.v);
    expect(unsettled).not.toContain(settled.v);
    expect(unsettled).not.toContain(feeKept.v);
  });
});

describe('merchants never seen again', () => {
  const secret = async (merchant: string, ageDays: number, retiresInDays: number | null = null) =>
    db.pool.query('INSERT INTO merchant_webhook_secrets (merchant, ciphertext, created_at, retires_at) VALUES ($1, $2, $3, $4)', [
      merchant,
      'sealed',
      daysAgo(ageDays),
      retiresInDays === null ? null : new Date(Date.now() + retiresInDays * DAY),
    ]);
  const record = async (merchant: string, ageDays: number, columns: { settle_key_hash?: string; minimum_amount?: string } = {}) =>
    db.pool.query('INSERT INTO merchants (address, settle_key_hash, minimum_amount, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)', [
      merchant,
      columns.settle_key_hash ?? null,
      columns.minimum_amount ?? null,
      daysAgo(ageDays),
    ]);
  const deleteAllPages = async (limit: number) => {
    let deleted = 0;
    let pages = 0;
    for (let after: string | null = ''; after !== null; pages++) {
      const page: { deleted: number; next: string | null } = await merchants.deleteUnusedPage(daysAgo(90), after, limit);
      deleted += page.deleted;
      after = page.next;
    }
    return { deleted, pages };
  };
  const secretsOf = async (merchant: string) => Number((await db.pool.query('SELECT count(*) AS n FROM merchant_webhook_secrets WHERE merchant = $1', [merchant])).rows[0].n);

  it('deletes the secrets and row of a merchant with nothing it asked for, unseen for the period; keeps every merchant with something', async () => {
    const stranger = address(); // a payTo a stranger named: its secret made by a delivery, 100 days ago
    await secret(stranger, 100);
    const cleared = address(); // an empty row (settle protection turned off) and a retired secret
    await record(cleared, 100);
    await secret(cleared, 120, -20);
    await secret(cleared, 100);
    const keyed = address();
    await record(keyed, 400, { settle_key_hash: randomBytes(32).toString('hex') });
    await secret(keyed, 400);
    const minimum = address();
    await record(minimum, 400, { minimum_amount: '5000' });
    const settledMerchant = address();
    await secret(settledMerchant, 400);
    await settlementOf(await verification({ ageDays: 400, validBefore: '1', merchant: settledMerchant }), 'settled', 400);
    const seen = address(); // read its secret (a signed request) lately, waits for its first payment
    await secret(seen, 400);
    await merchants.markSeen(seen);
    const rotated = address();
    await secret(rotated, 400, -300);
    await secret(rotated, 10);
    const signing = address(); // a signed request of it is being handled right now
    await secret(signing, 400);
    await db.pool.query('INSERT INTO merchant_request_nonces (merchant, nonce, expires_at) VALUES ($1, $2, $3)', [signing, hex(32), new Date(Date.now() + 60_000)]);

    const { deleted, pages } = await deleteAllPages(2);
    expect(deleted).toBe(2);
    expect(pages).toBe(5); // 8 merchants, 2 a page, and the short page that ends the walk
    expect(await secretsOf(stranger)).toBe(0);
    expect(await secretsOf(cleared)).toBe(0);
    expect(await merchants.find(cleared)).toBeNull();
    for (const kept of [keyed, settledMerchant, seen, rotated, signing]) expect(await secretsOf(kept)).toBeGreaterThan(0);
    expect((await merchants.find(keyed))?.settleKeyHash).not.toBeNull();
    expect((await merchants.find(minimum))?.minimumAmount).toBe('5000');
    expect(await merchants.find(seen)).not.toBeNull();

    // nothing more to delete on the next run
    expect((await deleteAllPages(1000)).deleted).toBe(0);
  });

  it('deletes rotated secrets once they stopped signing, in batches; keeps the current one and one in its grace period', async () => {
    const merchant = address();
    await secret(merchant, 10, -3);
    await secret(merchant, 9, -2);
    await secret(merchant, 8, 1);
    await secret(merchant, 1);
    expect(await merchants.deleteRetiredSecrets(new Date(), 1)).toBe(1);
    expect(await merchants.deleteRetiredSecrets(new Date(), 1000)).toBe(2); // its other one, and the kept rotated merchant's old one
    expect(await merchants.deleteRetiredSecrets(new Date(), 1000)).toBe(0);
    expect(await secretsOf(merchant)).toBe(2);
    expect((await merchants.liveSecrets(merchant)).length).toBe(2);
  });

  it('deletes request nonces after their expiry, in batches; keeps the live ones (a replay is still refused)', async () => {
    const merchant = address();
    const live = hex(32);
    for (let i = 0; i < 3; i++) {
      await db.pool.query('INSERT INTO merchant_request_nonces (merchant, nonce, expires_at) VALUES ($1, $2, $3)', [merchant, hex(32), new Date(Date.now() - (i + 1) * 60_000)]);
    }
    expect(await merchants.useNonce(merchant, live, new Date(Date.now() + 600_000))).toBe(true);
    await db.pool.query('INSERT INTO merchant_request_nonces (merchant, nonce, expires_at) VALUES ($1, $2, $3)', [merchant, hex(32), new Date(Date.now() - 60_000)]);
    expect(await merchants.deleteExpiredNonces(new Date(), 1000)).toBe(1);
    expect(await merchants.deleteExpiredNonces(new Date(), 1000)).toBe(0);
    expect(await merchants.useNonce(merchant, live, new Date(Date.now() + 600_000))).toBe(false);
  });
});

describe('idempotency keys', () => {
  it('deletes expired keys in batches, oldest first; keeps the unexpired', async () => {
    const scope = `retention-${randomBytes(4).toString('hex')}`;
    for (let i = 0; i < 3; i++) {
      await db.prisma.idempotencyKey.create({ data: { scope, key: `old-${i}`, requestHash: 'h', status: 'completed', expiresAt: new Date(Date.UTC(2001, 0, 1 + i)) } });
    }
    await db.prisma.idempotencyKey.create({ data: { scope, key: 'live', requestHash: 'h', status: 'completed', expiresAt: new Date(Date.now() + DAY) } });
    expect(await keys.deleteExpired(new Date('2002-01-01T00:00:00Z'), 2)).toBe(2);
    expect((await db.prisma.idempotencyKey.findMany({ where: { scope }, orderBy: { key: 'asc' } })).map((k) => k.key)).toEqual(['live', 'old-2']);
    expect(await keys.deleteExpired(new Date('2002-01-01T00:00:00Z'), 2)).toBe(1);
    expect(await keys.deleteExpired(new Date('2002-01-01T00:00:00Z'), 2)).toBe(0);
  });
});

describe('payment identifiers', () => {
  it('deletes the old bindings of payments that never got a settlement, in batches; keeps a settled payment\'s and the recent', async () => {
    const ids = new PaymentIdentifierRepository(db.pool);
    const bindingOf = async (settlementId: string | null, ageDays: number) => {
      const s = settlementId ? (await settlements.findById(settlementId))! : null;
      const paymentId = `pay_${randomBytes(12).toString('hex')}`;
      await ids.bind({
        chainId: s?.chainId ?? 8453,
        paymentId,
        merchant: s?.merchant ?? address(),
        authorizationFingerprint: s?.authorizationFingerprint ?? hex(32),
        tokenAddress: s?.tokenAddress ?? USDC,
        payer: s?.payer ?? address(),
        nonce: s?.nonce ?? hex(32),
      });
      await db.pool.query('UPDATE payment_identifiers SET created_at = $2 WHERE payment_id = $1', [paymentId, daysAgo(ageDays)]);
      return paymentId;
    };
    const v = await verification({ ageDays: 40, validBefore: BigInt(Math.floor(Date.now() / 1000) - 86_400) });
    const settled = await bindingOf(await settlementOf(v, 'settled', 40), 40);
    const unsettled = [await bindingOf(null, 40), await bindingOf(null, 41), await bindingOf(null, 42)];
    const recent = await bindingOf(null, 1);
    const cutoff = daysAgo(30);
    expect(await ids.deleteUnsettled(cutoff, 2)).toBe(2);
    expect(await ids.deleteUnsettled(cutoff, 2)).toBe(1);
    expect(await ids.deleteUnsettled(cutoff, 2)).toBe(0);
    const left = (await db.pool.query('SELECT payment_id FROM payment_identifiers WHERE payment_id = ANY($1)', [[settled, recent, ...unsettled]])).rows.map((r) => r.payment_id);
    expect(left.sort()).toEqual([settled, recent].sort());
  });
});
