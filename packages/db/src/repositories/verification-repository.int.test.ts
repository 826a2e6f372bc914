// Round trip of VerificationRepository against a real, migrated Postgres: rows written through the
// repository (its batched INSERT) and read back through it, field by field, nulls and big values included.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdPrefix, newId } from '@facilitator/core';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import type { SettlementState } from '../generated/prisma/client';
import { VerificationRepository, type NewVerificationRow } from './verification-repository';

let db: TestDatabase;
let repo: VerificationRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new VerificationRepository(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

const USDC = '0x833589fcd6e4b24b4be8d3bb2a5ec2a7c3b7a8b0';
const PAYER = '0x1111111111111111111111111111111111111111';
const MERCHANT = '0x2222222222222222222222222222222222222222';
const TWO_POW_255 = (2n ** 255n).toString();
const MAX_UINT256 = (2n ** 256n - 1n).toString();

const randomNonce = () => `0x${randomBytes(32).toString('hex')}`;

/** A verified row; rows with the same nonce are the same authorization unless `authorizationFingerprint` says otherwise. */
function verifiedRow(overrides: Partial<NewVerificationRow> = {}): NewVerificationRow {
  // a row's network is its chain's (the database checks it): an overridden chain brings its own
  const chainNetwork = `eip155:${overrides.chainId ?? 8453}`;
  const row: NewVerificationRow = {
    id: newId(IdPrefix.Verification),
    status: 'verified',
    mechanism: 'exact/eip3009',
    scheme: 'exact',
    protocolVersion: 2,
    surface: 'x402',
    chainId: 8453,
    network: chainNetwork,
    networkName: chainNetwork,
    tokenAddress: USDC,
    payer: PAYER,
    merchant: MERCHANT,
    amount: TWO_POW_255,
    expectedAmount: '1000000',
    nonce: randomNonce(),
    validAfter: '0',
    validBefore: MAX_UINT256,
    signature: `0x${'ab'.repeat(65)}`,
    request: { paymentPayload: { x402Version: 2, payload: { value: TWO_POW_255 } }, paymentRequirements: { amount: '1000000', extra: null } },
    metadata: { orderId: 'o-1', nested: { list: [1, 'two', true, null] } },
    webhookUrl: 'https://merchant.example/hooks',
    verifyMs: 17,
    ...overrides,
  };
  const payload = {
    authorization: { from: row.payer, to: row.merchant, value: row.amount, validAfter: row.validAfter, validBefore: row.validBefore, nonce: row.nonce },
    signature: row.signature,
  };
  // an EIP-3009 nonce's space is its token
  return { authorizationFingerprint: `fp:${row.nonce}`, nonceSpace: row.tokenAddress, payload, ...row };
}

/** A settlement of the payment `row` verified, in `state` (set directly: only the verification side is under test). */
async function settlementOf(row: NewVerificationRow, state: SettlementState, merchantPaid = false): Promise<string> {
  const id = newId(IdPrefix.Settlement);
  await db.prisma.settlement.create({
    data: {
      id,
      verificationId: row.id,
      surface: row.surface,
      state,
      chainId: row.chainId,
      network: row.network,
      tokenAddress: row.tokenAddress!,
      nonceSpace: row.nonceSpace!,
      payer: row.payer!,
      merchant: row.merchant!,
      amount: row.amount!,
      nonce: row.nonce!,
      authorizationFingerprint: row.authorizationFingerprint,
      // live (owns the payment) unless it failed and released it
      paymentKey: state === 'failed' ? null : `${row.chainId}:${row.tokenAddress}:${row.payer}:${row.nonce}:${id}`,
      feeAmount: '1000',
      merchantPaid,
    },
  });
  return id;
}

describe('VerificationRepository', () => {
  it('stores every field of a verified row and reads it back with its exact types', async () => {
    // an x402 v1 body names its network `base`: stored as written beside the CAIP-2 id
    const row = verifiedRow({ networkName: 'base' });
    const before = Date.now();
    const created = await repo.create(row);

    expect(created).toStrictEqual({
      id: row.id,
      status: 'verified',
      protocolVersion: 2,
      surface: 'x402',
      chainId: 8453,
      network: 'eip155:8453',
      networkName: 'base',
      tokenAddress: USDC,
      payer: PAYER,
      merchant: MERCHANT,
      amount: TWO_POW_255,
      expectedAmount: '1000000',
      nonce: row.nonce,
      validAfter: '0',
      validBefore: MAX_UINT256,
      signature: row.signature,
      authorizationFingerprint: row.authorizationFingerprint,
      mechanism: 'exact/eip3009',
      scheme: 'exact',
      nonceSpace: USDC,
      payload: row.payload,
      request: row.request,
      metadata: row.metadata,
      webhookUrl: 'https://merchant.example/hooks',
      failureMessage: null,
      failureDetails: null,
      verifyMs: 17,
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    });
    // the database's clock, at millisecond precision
    expect(created.createdAt.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(created.createdAt.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(created.updatedAt).toEqual(created.createdAt);

    expect(await repo.findById(row.id)).toStrictEqual(created);
  });

  it('stores the optional fields it was not given as NULL and reads them back as null', async () => {
    const row: NewVerificationRow = {
      id: newId(IdPrefix.Verification),
      status: 'rejected',
      mechanism: 'exact/eip3009',
      scheme: 'exact',
      protocolVersion: 1,
      surface: 'v1',
      chainId: 84532,
      network: 'eip155:84532',
      networkName: 'base-sepolia',
      request: null,
      failureMessage: 'unsupported network',
      failureDetails: { reason: 'unsupported_network', accepted: ['base', 'base-sepolia'] },
    };
    const created = await repo.create(row);
    const found = await repo.findById(row.id);

    expect(found).toStrictEqual(created);
    expect(found).toMatchObject({ status: 'rejected', protocolVersion: 1, surface: 'v1', chainId: 84532, network: 'eip155:84532', networkName: 'base-sepolia' });
    for (const field of ['tokenAddress', 'payer', 'merchant', 'amount', 'expectedAmount', 'nonce', 'validAfter', 'validBefore', 'signature', 'request', 'metadata', 'webhookUrl'] as const) {
      expect(found![field]).toBeNull();
    }
    expect(found!.failureMessage).toBe('unsupported network');
    expect(found!.failureDetails).toStrictEqual({ reason: 'unsupported_network', accepted: ['base', 'base-sepolia'] });
  });

  it('stores many verifications arriving together, each resolving with its own row', async () => {
    const rows = Array.from({ length: 70 }, (_, i) => verifiedRow({ amount: String(i + 1), metadata: i % 2 === 0 ? { i } : null }));
    const created = await Promise.all(rows.map((row) => repo.create(row)));

    created.forEach((record, i) => {
      expect(record.id).toBe(rows[i].id);
      expect(record.amount).toBe(String(i + 1));
      expect(record.nonce).toBe(rows[i].nonce);
      expect(record.metadata).toStrictEqual(i % 2 === 0 ? { i } : null);
    });
    const { rows: stored } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM verifications WHERE id = ANY($1::text[])', [rows.map((r) => r.id)]);
    expect(stored[0].n).toBe(70);
  });

  it("rejects a duplicate id with the database's error, tagged as the database's", async () => {
    const row = verifiedRow();
    await repo.create(row);
    await expect(repo.create({ ...row, nonce: randomNonce() })).rejects.toMatchObject({ code: '23505', dependency: 'database' });
    expect((await repo.findById(row.id))!.nonce).toBe(row.nonce);
  });

  it('a row the database refuses fails alone, not the others of its batch', async () => {
    const taken = verifiedRow();
    await repo.create(taken);
    const others = Array.from({ length: 10 }, () => verifiedRow());
    // arriving in the same turn: one INSERT for all eleven, which the duplicate id makes fail
    const results = await Promise.allSettled([...others.slice(0, 5), { ...taken, nonce: randomNonce() }, ...others.slice(5)].map((row) => repo.create(row)));
    expect(results.map((r) => r.status)).toEqual([...Array(5).fill('fulfilled'), 'rejected', ...Array(5).fill('fulfilled')]);
    expect((results[5] as PromiseRejectedResult).reason).toMatchObject({ code: '23505', dependency: 'database' });
    const { rows: stored } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM verifications WHERE id = ANY($1::text[])', [others.map((r) => r.id)]);
    expect(stored[0].n).toBe(10);
  });

  it('findById returns null for an unknown id', async () => {
    expect(await repo.findById(newId(IdPrefix.Verification))).toBeNull();
  });

  describe('createCheckingNonce', () => {
    it('reports no use when no settlement has the nonce, or only ones that did not consume it', async () => {
      const first = verifiedRow();
      expect(await repo.createCheckingNonce(first)).toEqual({ record: expect.objectContaining({ id: first.id }), usedBy: null, heldBy: null });

      await settlementOf(first, 'pending');
      await settlementOf(first, 'collect_fee');
      await settlementOf(first, 'failed');
      const again = await repo.createCheckingNonce(verifiedRow({ nonce: first.nonce }));
      expect(again.usedBy).toBeNull();
      expect(again.record.nonce).toBe(first.nonce);
    });

    it.each(['fee_collected', 'executing', 'settled'] as const)('reports the settlement that used the nonce (%s)', async (state) => {
      const first = verifiedRow();
      await repo.create(first);
      const settlementId = await settlementOf(first, state);

      const { record, usedBy } = await repo.createCheckingNonce(verifiedRow({ nonce: first.nonce }));
      expect(usedBy).toBe(settlementId);
      expect(record.status).toBe('verified');
      expect(await repo.findById(record.id)).toStrictEqual(record);
    });

    it('reports a failed settlement whose merchant was paid all the same', async () => {
      const first = verifiedRow();
      await repo.create(first);
      const settlementId = await settlementOf(first, 'failed', true);
      expect((await repo.createCheckingNonce(verifiedRow({ nonce: first.nonce }))).usedBy).toBe(settlementId);
    });

    it('matches on chain, token, payer and nonce together', async () => {
      const first = verifiedRow();
      await repo.create(first);
      await settlementOf(first, 'settled');

      const others = [
        verifiedRow({ nonce: first.nonce, chainId: 84532 }),
        verifiedRow({ nonce: first.nonce, tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' }),
        verifiedRow({ nonce: first.nonce, payer: '0x3333333333333333333333333333333333333333' }),
        verifiedRow(),
      ];
      const results = await Promise.all(others.map((row) => repo.createCheckingNonce(row)));
      expect(results.map((r) => r.usedBy)).toEqual([null, null, null, null]);
    });
  });

  describe('createCheckingNonce: another authorization with the same payer and nonce (payment identity)', () => {
    const other = (first: NewVerificationRow, overrides: Partial<NewVerificationRow> = {}) =>
      verifiedRow({ nonce: first.nonce, merchant: '0x5555555555555555555555555555555555555555', authorizationFingerprint: `other:${first.nonce}`, ...overrides });

    it.each(['pending', 'check_allowance', 'collect_fee', 'fee_collected', 'executing', 'settled'] as const)(
      'reports the live settlement (%s) of the other authorization as holding the nonce',
      async (state) => {
        const first = verifiedRow();
        await repo.create(first);
        const holder = await settlementOf(first, state);
        const { heldBy } = await repo.createCheckingNonce(other(first));
        expect(heldBy).toBe(holder);
      },
    );

    it('a failed settlement that released the payment holds nothing; one whose merchant was paid does', async () => {
      const released = verifiedRow({ validBefore: '1' });
      await repo.create(released);
      await settlementOf(released, 'failed');
      expect((await repo.createCheckingNonce(other(released))).heldBy).toBeNull();

      const paid = verifiedRow({ validBefore: '1' });
      await repo.create(paid);
      const holder = await settlementOf(paid, 'failed', true);
      expect((await repo.createCheckingNonce(other(paid))).heldBy).toBe(holder);
    });

    it('reports a verified verification of the other authorization while it can still execute', async () => {
      const first = verifiedRow();
      await repo.create(first);
      expect((await repo.createCheckingNonce(other(first))).heldBy).toBe(first.id);
    });

    it('an expired or rejected verification of another authorization holds nothing, nor does the same authorization', async () => {
      const expired = verifiedRow({ validBefore: String(Math.floor(Date.now() / 1000) - 1) });
      await repo.create(expired);
      expect((await repo.createCheckingNonce(other(expired))).heldBy).toBeNull();

      const rejected = verifiedRow();
      await repo.create(rejected);
      await repo.reject(rejected.id, 'amount mismatch', {});
      expect((await repo.createCheckingNonce(other(rejected))).heldBy).toBeNull();

      const same = verifiedRow();
      await repo.create(same);
      await settlementOf(same, 'collect_fee');
      expect((await repo.createCheckingNonce(verifiedRow({ nonce: same.nonce }))).heldBy).toBeNull();
    });
  });

  describe('createCheckingNonce: the nonce space (a Permit2 nonce is shared by every token)', () => {
    const PERMIT2 = '0x000000000022d473030f116ddee9f6b43ac78ba3';
    const OTHER_TOKEN = '0x036cbd53842c5426634e7929541ec2318f3dcf7e';
    const permit2Row = (overrides: Partial<NewVerificationRow> = {}) =>
      verifiedRow({ mechanism: 'exact/permit2', nonceSpace: PERMIT2, payload: { permit2: 'stand-in' }, ...overrides });

    it("holds a Permit2 nonce against the payer's payment of another token with it, and never against an EIP-3009 nonce of the same value", async () => {
      const first = permit2Row();
      await repo.create(first);
      const otherToken = permit2Row({ nonce: first.nonce, tokenAddress: OTHER_TOKEN, authorizationFingerprint: `other:${first.nonce}` });
      expect((await repo.createCheckingNonce(otherToken)).heldBy).toBe(first.id);

      const eip3009 = verifiedRow({ nonce: first.nonce, authorizationFingerprint: `eip3009:${first.nonce}` });
      expect(await repo.createCheckingNonce(eip3009)).toMatchObject({ usedBy: null, heldBy: null });
    });

    it("reports a settlement that used a Permit2 nonce as its use, whatever token the new payment names", async () => {
      const first = permit2Row();
      await repo.create(first);
      const used = await settlementOf(first, 'settled');
      const again = permit2Row({ nonce: first.nonce, tokenAddress: OTHER_TOKEN });
      expect((await repo.createCheckingNonce(again)).usedBy).toBe(used);
      expect((await repo.createCheckingNonce(verifiedRow({ nonce: first.nonce }))).usedBy).toBeNull();
    });

    it("fills an older process's row without a space with its token's (an EIP-3009 nonce's), as readers ask by space", async () => {
      const { nonceSpace: _none, ...older } = verifiedRow();
      const stored = await repo.create({ ...older, nonceSpace: null });
      expect(stored.nonceSpace).toBe(USDC);
      await settlementOf(stored as NewVerificationRow, 'executing');
      expect((await repo.createCheckingNonce(verifiedRow({ nonce: older.nonce }))).usedBy).not.toBeNull();
    });
  });

  describe('createCheckingNonce: rows of an older process without a fingerprint (rolling deploy)', () => {
    it('a settlement without one holds the nonce only for another merchant or amount', async () => {
      const first = verifiedRow({ authorizationFingerprint: null });
      await repo.create(first);
      const holder = await settlementOf(first, 'collect_fee');
      expect((await repo.createCheckingNonce(verifiedRow({ nonce: first.nonce }))).heldBy).toBeNull();
      const elsewhere = verifiedRow({ nonce: first.nonce, merchant: '0x5555555555555555555555555555555555555555', authorizationFingerprint: 'other' });
      expect((await repo.createCheckingNonce(elsewhere)).heldBy).toBe(holder);
    });

    it('a verified verification without one holds the nonce only for another authorization (merchant, amount, validity)', async () => {
      const first = verifiedRow({ authorizationFingerprint: null, validBefore: '99999999999' });
      await repo.create(first);
      expect((await repo.createCheckingNonce(verifiedRow({ nonce: first.nonce, validBefore: '99999999999' }))).heldBy).toBeNull();
      expect((await repo.createCheckingNonce(verifiedRow({ nonce: first.nonce, validBefore: '99999999998', authorizationFingerprint: 'x' }))).heldBy).toBe(first.id);
    });
  });

  describe('reject', () => {
    it('says so when the verification does not exist', async () => {
      await expect(repo.reject('ver_' + '0'.repeat(32), 'no', {})).rejects.toThrow('no verification ver_00000000000000000000000000000000 to reject');
    });

    it('keeps who, what and why, and drops the request, metadata, signature and payload', async () => {
      const row = verifiedRow();
      const created = await repo.create(row);
      await sleep(5);

      const rejected = await repo.reject(row.id, 'insufficient balance', { balance: '0', needed: TWO_POW_255 });
      expect(rejected).toStrictEqual({
        ...created,
        status: 'rejected',
        request: null,
        metadata: null,
        signature: null,
        payload: null,
        failureMessage: 'insufficient balance',
        failureDetails: { balance: '0', needed: TWO_POW_255 },
        updatedAt: expect.any(Date),
      });
      expect(rejected.updatedAt.getTime()).toBeGreaterThan(created.updatedAt.getTime());
      expect(await repo.findById(row.id)).toStrictEqual(rejected);
    });
  });

  describe('findLatestVerified', () => {
    it('returns the newest verified row of the authorization, skipping rejected ones, other payments and other authorizations with the nonce', async () => {
      const nonce = randomNonce();
      const authorizationFingerprint = `fp:${nonce}`;
      await repo.create(verifiedRow({ nonce, amount: '2' }));
      await sleep(5);
      const newest = await repo.create(verifiedRow({ nonce, amount: '2' }));
      await sleep(5);
      const rejected = await repo.create(verifiedRow({ nonce, amount: '2' }));
      await repo.reject(rejected.id, 'expired', {});
      await repo.create(verifiedRow({ nonce, payer: '0x4444444444444444444444444444444444444444', amount: '4' }));
      // the payer's other authorization with the same nonce, verified last: never this one's
      await repo.create(verifiedRow({ nonce, amount: '3', authorizationFingerprint: `other:${nonce}` }));

      const payment = { chainId: 8453, nonceSpace: USDC, payer: PAYER, nonce, authorizationFingerprint };
      expect(await repo.findLatestVerified(payment)).toStrictEqual(newest);
      expect(await repo.findLatestVerified({ ...payment, chainId: 84532 })).toBeNull();
      expect(await repo.findLatestVerified({ ...payment, nonce: randomNonce() })).toBeNull();
      expect((await repo.findLatestVerified({ ...payment, authorizationFingerprint: `other:${nonce}` }))?.amount).toBe('3');
    });

    it("returns a row of an older process (no fingerprint) only after the rows with this one, for the caller to judge", async () => {
      const nonce = randomNonce();
      const payment = { chainId: 8453, nonceSpace: USDC, payer: PAYER, nonce, authorizationFingerprint: `fp:${nonce}` };
      const older = await repo.create(verifiedRow({ nonce, amount: '5', authorizationFingerprint: null }));
      expect(await repo.findLatestVerified(payment)).toStrictEqual(older);
      await sleep(5);
      const exact = await repo.create(verifiedRow({ nonce, amount: '5' }));
      await sleep(5);
      await repo.create(verifiedRow({ nonce, amount: '6', authorizationFingerprint: null }));
      expect(await repo.findLatestVerified(payment)).toStrictEqual(exact);
    });
  });
});
