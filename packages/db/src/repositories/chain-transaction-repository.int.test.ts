// Round trip of ChainTransactionRepository against a real, migrated Postgres: nonces allocated,
// signed versions stored and outcomes recorded through the repository, read back through it (int8 columns
// as bigint, attempts aggregated as JSON and mapped with their dates).
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { IdPrefix, newId } from '@facilitator/core';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { ChainTransactionRepository, type NewAttempt, type NewTransaction, type TransactionPurpose } from './chain-transaction-repository';
import { allSettlementReaders, type AllSettlementReaders } from '../testing/all-settlement-readers';
import { VerificationRepository } from './verification-repository';

let db: TestDatabase;
let repo: ChainTransactionRepository;
let verifications: VerificationRepository;
let settlements: AllSettlementReaders;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new ChainTransactionRepository(db.pool);
  verifications = new VerificationRepository(db.pool);
  settlements = allSettlementReaders(db.prisma, db.pool);
});

afterAll(async () => {
  await db?.drop();
});

const CHAIN = 8453;
const USDC = '0x833589fcd6e4b24b4be8d3bb2a5ec2a7c3b7a8b0';
const TWO_POW_255 = 2n ** 255n;
/** past 2^53: a nonce that a JS number would round */
const BIG_NONCE = 2n ** 53n + 1n;

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
const address = () => hex(20);

/** A settlement for the foreign key (and its verification). */
async function newSettlement(): Promise<string> {
  const verificationId = newId(IdPrefix.Verification);
  const settlementId = newId(IdPrefix.Settlement);
  const payment = { chainId: CHAIN, network: `eip155:${CHAIN}`, tokenAddress: USDC, payer: address(), merchant: address(), amount: '1000000', nonce: hex(32) };
  await verifications.create({ id: verificationId, status: 'verified', mechanism: 'exact/eip3009', scheme: 'exact', protocolVersion: 2, surface: 'x402', networkName: 'eip155:8453', request: {}, ...payment });
  await settlements.createOrGetForPayment({ id: settlementId, verificationId, mechanism: 'exact/eip3009', scheme: 'exact', nonceSpace: USDC, payload: null, paymentKey: `key:${settlementId}`, surface: 'x402', feeAmount: '1000', authorizationFingerprint: settlementId, ...payment });
  return settlementId;
}

function newTransaction(settlementId: string, from: string, purpose: TransactionPurpose = 'fee', overrides: Partial<NewTransaction> = {}): NewTransaction {
  return { settlementId, purpose, chainId: CHAIN, from, to: USDC, data: `0x23b872dd${'00'.repeat(96)}`, gasLimit: 120_000n, authenticator: '0x', ...overrides };
}

/** Allocates one transaction of a fresh settlement for key `from`. */
async function allocate(from: string, chainPendingNonce = 0n, purpose: TransactionPurpose = 'fee') {
  const row = await repo.allocateAndInsert(newTransaction(await newSettlement(), from, purpose), chainPendingNonce);
  if (!row) throw new Error('not allocated');
  return row;
}

function signedVersion(maxFeePerGas: bigint, maxPriorityFeePerGas = 1_000_000n): NewAttempt {
  return { hash: hex(32), rawTransaction: `0x02f8${randomBytes(100).toString('hex')}`, fees: { maxFeePerGas, maxPriorityFeePerGas } };
}

describe('ChainTransactionRepository', () => {
  describe('countUnfinishedFrom', () => {
    it('counts the key\'s transactions on the chain that may still be mined (a delegated treasury sends one at a time)', async () => {
      const from = address();
      expect(await repo.countUnfinishedFrom(CHAIN, from)).toBe(0);
      const first = await allocate(from);
      const second = await allocate(from);
      await allocate(address());
      expect(await repo.countUnfinishedFrom(CHAIN, from.toUpperCase().replace('0X', '0x'))).toBe(2);
      expect(await repo.countUnfinishedFrom(84532, from)).toBe(0);
      const attempt = await repo.storeFirstAttempt(first, async () => signedVersion(10n));
      await repo.recordMined(first.id, { status: 'confirmed', hash: attempt.hash, blockNumber: 5 });
      expect(await repo.countUnfinishedFrom(CHAIN, from)).toBe(1);
      const other = await repo.storeFirstAttempt(second, async () => signedVersion(10n));
      await repo.recordMined(second.id, { status: 'reverted', hash: other.hash, blockNumber: 6 });
      expect(await repo.countUnfinishedFrom(CHAIN, from)).toBe(0);
    });
  });

  describe('allocateAndInsert', () => {
    it('stores the transaction with the chain’s pending nonce for a new key, every column mapped', async () => {
      const settlementId = await newSettlement();
      const from = address();
      const tx = newTransaction(settlementId, from, 'transfer', { gasLimit: TWO_POW_255 });
      const before = Date.now();
      const row = await repo.allocateAndInsert(tx, 7n);

      expect(row).toStrictEqual({
        id: expect.stringMatching(/^ctx_[0-9a-f]{32}$/),
        settlementId,
        purpose: 'transfer',
        chainId: CHAIN,
        network: `eip155:${CHAIN}`,
        fromAddress: from,
        toAddress: USDC,
        data: tx.data,
        nonce: 7n,
        gasLimit: TWO_POW_255.toString(),
        authenticator: '0x',
        status: 'allocated',
        minedHash: null,
        blockNumber: null,
        revertReason: null,
        blockHash: null,
        finalAt: null,
        reorgCount: 0,
        createdAt: expect.any(Date),
        updatedAt: expect.any(Date),
        provider: 'local',
        providerTransactionId: null,
        providerStatus: null,
        providerStatusReason: null,
        providerHashes: [],
        providerRequestedAt: null,
        attempts: [],
      });
      expect(Math.abs(row!.createdAt.getTime() - before)).toBeLessThan(5_000);
      expect(await repo.findById(row!.id)).toStrictEqual(row);
      expect(await repo.findByKey(settlementId, 'transfer')).toStrictEqual(row);
      expect(await repo.getById(row!.id)).toStrictEqual(row);
    });

    it('hands out consecutive nonces per key and chain, and follows the chain when it is ahead', async () => {
      const from = address();
      expect((await allocate(from, 0n)).nonce).toBe(0n);
      expect((await allocate(from, 0n)).nonce).toBe(1n);
      // the chain is behind our table (transactions not yet seen): our count wins
      expect((await allocate(from, 1n)).nonce).toBe(2n);
      // the chain is ahead (the key was used elsewhere): its count wins
      expect((await allocate(from, 10n)).nonce).toBe(10n);
      expect((await allocate(from, 0n)).nonce).toBe(11n);

      // another key, or the same key on another chain, counts on its own
      expect((await allocate(address(), 0n)).nonce).toBe(0n);
      const otherChain = await repo.allocateAndInsert(newTransaction(await newSettlement(), from, 'fee', { chainId: 84532 }), 0n);
      expect(otherChain!.nonce).toBe(0n);
    });

    it('keeps nonces past 2^53 exact', async () => {
      const from = address();
      const first = await allocate(from, BIG_NONCE);
      expect(first.nonce).toBe(BIG_NONCE);
      expect(typeof first.nonce).toBe('bigint');
      expect((await allocate(from, 0n)).nonce).toBe(BIG_NONCE + 1n);
      expect((await repo.findById(first.id))!.nonce).toBe(BIG_NONCE);
    });

    it('returns null for a second transaction of the same settlement and purpose, and gives the nonce back', async () => {
      const from = address();
      const settlementId = await newSettlement();
      const first = await repo.allocateAndInsert(newTransaction(settlementId, from, 'fee'), 0n);
      expect(first!.nonce).toBe(0n);

      expect(await repo.allocateAndInsert(newTransaction(settlementId, from, 'fee'), 0n)).toBeNull();
      expect(await repo.allocateAndInsert(newTransaction(settlementId, address(), 'fee'), 0n)).toBeNull();
      expect((await repo.findByKey(settlementId, 'fee'))!.id).toBe(first!.id);

      // the refused allocations took no nonce
      const transfer = await repo.allocateAndInsert(newTransaction(settlementId, from, 'transfer'), 0n);
      expect(transfer!.nonce).toBe(1n);
    });

    it('never gives one nonce twice under concurrency, and leaves no gap', async () => {
      const from = address();
      const settlementIds = await Promise.all(Array.from({ length: 12 }, () => newSettlement()));
      const rows = await Promise.all(settlementIds.map((id) => repo.allocateAndInsert(newTransaction(id, from), 0n)));
      const nonces = rows.map((r) => r!.nonce).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      expect(nonces).toEqual(Array.from({ length: 12 }, (_, i) => BigInt(i)));
    });

    it('passes other database errors on, tagged as the database’s', async () => {
      // a chain id outside the column's integer range
      await expect(repo.allocateAndInsert(newTransaction(newId(IdPrefix.Settlement), address(), 'fee', { chainId: 2 ** 40 }), 0n)).rejects.toMatchObject({
        code: '22003',
        dependency: 'database',
      });
    });
  });

  describe('lookups', () => {
    it('finds nothing for an unknown id or key, and getById says which id', async () => {
      const unknown = newId(IdPrefix.ChainTransaction);
      expect(await repo.findById(unknown)).toBeNull();
      expect(await repo.findByKey(await newSettlement(), 'fee')).toBeNull();
      await expect(repo.getById(unknown)).rejects.toThrow(`no chain transaction ${unknown}`);
    });
  });

  describe('paymentTransactionHashes', () => {
    it("names only the transaction that moves the payer's money (the transfer), never the fee or a wallet deployment", async () => {
      const settlementId = await newSettlement();
      const [deploy, fee, transfer] = [signedVersion(3n), signedVersion(2n), signedVersion(1n)];
      for (const [purpose, version] of [['wallet_deploy', deploy], ['fee', fee]] as const) {
        const row = (await repo.allocateAndInsert(newTransaction(settlementId, address(), purpose), 0n))!;
        await repo.storeFirstAttempt(row, async () => version);
      }
      // the fee and the deployment are signed: nothing a pending answer may name yet
      expect(await repo.paymentTransactionHashes([settlementId])).toEqual(new Map());
      const row = (await repo.allocateAndInsert(newTransaction(settlementId, address(), 'transfer'), 0n))!;
      await repo.storeFirstAttempt(row, async () => transfer);
      expect(await repo.paymentTransactionHashes([settlementId])).toEqual(new Map([[settlementId, transfer.hash]]));
    });
  });

  describe('storeFirstAttempt', () => {
    it('signs and stores the first version, moving the transaction to signed', async () => {
      const row = await allocate(address());
      const version = signedVersion(TWO_POW_255, TWO_POW_255 - 1n);
      const sign = jest.fn(async () => version);
      const before = Date.now();

      const attempt = await repo.storeFirstAttempt(row, sign);
      expect(sign).toHaveBeenCalledTimes(1);
      expect(attempt).toStrictEqual({
        hash: version.hash,
        transactionId: row.id,
        rawTransaction: version.rawTransaction,
        maxFeePerGas: TWO_POW_255.toString(),
        maxPriorityFeePerGas: (TWO_POW_255 - 1n).toString(),
        broadcastAt: null,
        lastError: null,
        createdAt: expect.any(Date),
      });
      expect(Math.abs(attempt.createdAt.getTime() - before)).toBeLessThan(5_000);

      const stored = (await repo.getById(row.id))!;
      expect(stored.status).toBe('signed');
      // the attempt read back through json_agg maps to the same fields, its date included
      expect(stored.attempts).toStrictEqual([attempt]);
    });

    it('returns the stored version without signing when the row already has one', async () => {
      const row = await allocate(address());
      const first = await repo.storeFirstAttempt(row, async () => signedVersion(100n));
      const sign = jest.fn(async () => signedVersion(200n));

      expect(await repo.storeFirstAttempt(await repo.getById(row.id), sign)).toStrictEqual(first);
      expect(sign).not.toHaveBeenCalled();
    });

    it('returns the version stored first when its own read of the row was stale', async () => {
      const row = await allocate(address());
      const first = await repo.storeFirstAttempt(row, async () => signedVersion(100n));
      // `row` still says allocated with no attempts: this caller signs, but its version is not stored
      expect(await repo.storeFirstAttempt(row, async () => signedVersion(200n))).toStrictEqual(first);
      expect((await repo.getById(row.id)).attempts).toStrictEqual([first]);
    });

    it('makes concurrent resumers agree on one version', async () => {
      const row = await allocate(address());
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => repo.storeFirstAttempt(row, async () => signedVersion(100n + BigInt(i)))));
      expect(new Set(results.map((a) => a.hash)).size).toBe(1);
      expect((await repo.getById(row.id)).attempts).toHaveLength(1);
    });

    it('refuses a row past allocated that has no stored version', async () => {
      const row = await allocate(address());
      await repo.markReplaced(row.id);
      const replaced = await repo.getById(row.id);
      await expect(repo.storeFirstAttempt(replaced, async () => signedVersion(1n))).rejects.toThrow(`chain transaction ${row.id} is replaced but has no signed version`);
    });
  });

  describe('addAttempt', () => {
    it('stores replacements and lists every version oldest first', async () => {
      const row = await allocate(address());
      // hashes in descending order, so an order by hash would show
      const versions = [signedVersion(100n), signedVersion(150n), signedVersion(300n)];
      versions[0].hash = `0x${'f'.repeat(64)}`;
      versions[1].hash = `0x${'8'.repeat(64)}`;
      versions[2].hash = `0x${'0'.repeat(64)}`;
      await repo.storeFirstAttempt(row, async () => versions[0]);
      await sleep(3);
      const second = await repo.addAttempt(row.id, versions[1]);
      await sleep(3);
      await repo.addAttempt(row.id, versions[2]);

      expect(second).toMatchObject({ hash: versions[1].hash, transactionId: row.id, maxFeePerGas: '150', broadcastAt: null, lastError: null });
      const stored = await repo.getById(row.id);
      expect(stored.attempts.map((a) => a.maxFeePerGas)).toEqual(['100', '150', '300']);
      expect(stored.status).toBe('signed');
    });

    it('is idempotent on the hash: the same bytes are one attempt, the one stored first', async () => {
      const row = await allocate(address());
      const version = signedVersion(100n);
      await repo.storeFirstAttempt(row, async () => signedVersion(50n));
      const first = await repo.addAttempt(row.id, version);
      const again = await repo.addAttempt(row.id, { ...version, rawTransaction: '0xdifferent', fees: { maxFeePerGas: 999n, maxPriorityFeePerGas: 999n } });

      expect(again).toStrictEqual(first);
      expect((await repo.getById(row.id)).attempts).toHaveLength(2);
    });

    it('orders versions stored in the same millisecond by their fees, as numbers', async () => {
      const row = await allocate(address());
      await repo.storeFirstAttempt(row, async () => signedVersion(9n));
      await repo.addAttempt(row.id, signedVersion(100n));
      await repo.addAttempt(row.id, signedVersion(10n));
      await db.pool.query(`UPDATE chain_transaction_attempts SET created_at = '2030-01-01T00:00:00.000Z' WHERE transaction_id = $1`, [row.id]);

      const stored = await repo.getById(row.id);
      expect(stored.attempts.map((a) => a.maxFeePerGas)).toEqual(['9', '10', '100']);
      expect(stored.attempts[0].createdAt).toEqual(new Date('2030-01-01T00:00:00.000Z'));
    });
  });

  describe('broadcast and outcome', () => {
    it('markBroadcast stamps the version, clears its error and moves signed to broadcast', async () => {
      const row = await allocate(address());
      const attempt = await repo.storeFirstAttempt(row, async () => signedVersion(100n));
      await repo.recordAttemptError(attempt.hash, 'e'.repeat(1_500));
      expect((await repo.getById(row.id)).attempts[0].lastError).toBe('e'.repeat(1_000));

      await repo.markBroadcast(row.id, attempt.hash);
      const broadcast = await repo.getById(row.id);
      expect(broadcast.status).toBe('broadcast');
      expect(broadcast.attempts[0].lastError).toBeNull();
      expect(broadcast.attempts[0].broadcastAt).toBeInstanceOf(Date);
      expect(Math.abs(broadcast.attempts[0].broadcastAt!.getTime() - Date.now())).toBeLessThan(5_000);

      // a second broadcast of the same version keeps the first time
      await sleep(5);
      await repo.markBroadcast(row.id, attempt.hash);
      expect((await repo.getById(row.id)).attempts[0].broadcastAt).toEqual(broadcast.attempts[0].broadcastAt);
    });

    it('markBroadcast with no hash moves the status only', async () => {
      const row = await allocate(address());
      await repo.storeFirstAttempt(row, async () => signedVersion(100n));
      await repo.markBroadcast(row.id, null);
      const stored = await repo.getById(row.id);
      expect(stored.status).toBe('broadcast');
      expect(stored.attempts[0].broadcastAt).toBeNull();
    });

    it('markBroadcast leaves a transaction that is not signed as it is', async () => {
      const allocated = await allocate(address());
      await repo.markBroadcast(allocated.id, null);
      expect((await repo.getById(allocated.id)).status).toBe('allocated');

      const mined = await allocate(address());
      const attempt = await repo.storeFirstAttempt(mined, async () => signedVersion(100n));
      await repo.recordMined(mined.id, { status: 'confirmed', hash: attempt.hash, blockNumber: 5 });
      await repo.markBroadcast(mined.id, attempt.hash);
      expect((await repo.getById(mined.id)).status).toBe('confirmed');
    });

    it('recordMined stores the outcome, the block number as bigint and the revert reason', async () => {
      const confirmed = await allocate(address());
      const attempt = await repo.storeFirstAttempt(confirmed, async () => signedVersion(100n));
      await repo.recordMined(confirmed.id, { status: 'confirmed', hash: attempt.hash, blockNumber: 2 ** 40 });
      expect(await repo.getById(confirmed.id)).toMatchObject({ status: 'confirmed', minedHash: attempt.hash, blockNumber: 2n ** 40n, revertReason: null });

      const reverted = await allocate(address());
      const other = await repo.storeFirstAttempt(reverted, async () => signedVersion(100n));
      await repo.recordMined(reverted.id, { status: 'reverted', hash: other.hash, blockNumber: 123, revertReason: 'FiatTokenV2: authorization is used or canceled' });
      const row = await repo.findByKey(reverted.settlementId, 'fee');
      expect(row).toMatchObject({ status: 'reverted', minedHash: other.hash, blockNumber: 123n, revertReason: 'FiatTokenV2: authorization is used or canceled' });
      expect(typeof row!.blockNumber).toBe('bigint');
    });

    it('markReplaced replaces an unfinished transaction but never a mined one', async () => {
      const broadcast = await allocate(address());
      const attempt = await repo.storeFirstAttempt(broadcast, async () => signedVersion(100n));
      await repo.markBroadcast(broadcast.id, attempt.hash);
      await repo.markReplaced(broadcast.id);
      expect((await repo.getById(broadcast.id)).status).toBe('replaced');

      const mined = await allocate(address());
      const minedAttempt = await repo.storeFirstAttempt(mined, async () => signedVersion(100n));
      await repo.recordMined(mined.id, { status: 'reverted', hash: minedAttempt.hash, blockNumber: 1 });
      await repo.markReplaced(mined.id);
      expect((await repo.getById(mined.id)).status).toBe('reverted');
    });
  });

  describe('findUnfinishedBetween', () => {
    it('finds the key’s unfinished transactions with nonces in [from, below), by nonce, with their versions', async () => {
      const from = address();
      const rows = [];
      for (let i = 0; i < 6; i++) rows.push(await allocate(from, BIG_NONCE));
      // nonces BIG_NONCE .. BIG_NONCE+5: 0 allocated, 1 signed, 2 broadcast, 3 confirmed, 4 replaced, 5 allocated (outside the range)
      const signed = await repo.storeFirstAttempt(rows[1], async () => signedVersion(100n));
      const sent = await repo.storeFirstAttempt(rows[2], async () => signedVersion(100n));
      await repo.markBroadcast(rows[2].id, sent.hash);
      const mined = await repo.storeFirstAttempt(rows[3], async () => signedVersion(100n));
      await repo.recordMined(rows[3].id, { status: 'confirmed', hash: mined.hash, blockNumber: 9 });
      await repo.markReplaced(rows[4].id);
      await allocate(address(), BIG_NONCE);

      const found = await repo.findUnfinishedBetween(CHAIN, from, BIG_NONCE, BIG_NONCE + 5n);
      expect(found.map((r) => [r.nonce, r.status])).toEqual([
        [BIG_NONCE, 'allocated'],
        [BIG_NONCE + 1n, 'signed'],
        [BIG_NONCE + 2n, 'broadcast'],
      ]);
      expect(found[1].attempts).toStrictEqual([signed]);
      expect(found[2].attempts.map((a) => a.hash)).toEqual([sent.hash]);
      expect(await repo.findUnfinishedBetween(CHAIN, from, BIG_NONCE + 1n, BIG_NONCE + 2n)).toHaveLength(1);
      expect(await repo.findUnfinishedBetween(84532, from, BIG_NONCE, BIG_NONCE + 5n)).toEqual([]);
      expect(await repo.findUnfinishedBetween(CHAIN, from, 0n, BIG_NONCE)).toEqual([]);
    });
  });

  describe('reorg watching', () => {
    it('lists mined transactions until final with their mined signed version, and records reorg, re-inclusion, loss and finality', async () => {
      const from = address();
      const row = await allocate(from);
      const version = signedVersion(10n ** 9n);
      await repo.storeFirstAttempt(row, async () => version);
      await repo.recordMined(row.id, { status: 'confirmed', hash: version.hash, blockNumber: 120, blockHash: '0xb120' });
      const other = await allocate(address());
      const watchedOf = async () => (await repo.findAwaitingFinality(CHAIN, 10_000)).filter((w) => w.id === row.id || w.id === other.id);

      // an unmined one is not watched
      expect(await watchedOf()).toEqual([
        { id: row.id, settlementId: row.settlementId, purpose: 'fee', status: 'confirmed', minedHash: version.hash, blockNumber: 120, blockHash: '0xb120', reorgCount: 0, rawTransaction: version.rawTransaction },
      ]);
      expect(await repo.markReorged(row.id)).toBe(true);
      expect(await repo.markReorged(row.id)).toBe(false);
      expect(await watchedOf()).toMatchObject([{ id: row.id, blockNumber: null, blockHash: null, reorgCount: 1 }]);
      await repo.markReincluded(row.id, { status: 'reverted', blockNumber: 123, blockHash: '0xb123', revertReason: 'transfer amount exceeds balance' });
      expect(await repo.findById(row.id)).toMatchObject({ status: 'reverted', blockNumber: 123n, blockHash: '0xb123', revertReason: 'transfer amount exceeds balance', reorgCount: 1, finalAt: null });
      await repo.markFinal(row.id);
      expect(await watchedOf()).toEqual([]);
      expect((await repo.findById(row.id))!.finalAt).toBeInstanceOf(Date);
    });

    it('a lost one (its nonce taken by another transaction) is replaced and no longer watched', async () => {
      const row = await allocate(address());
      const version = signedVersion(10n ** 9n);
      await repo.storeFirstAttempt(row, async () => version);
      await repo.recordMined(row.id, { status: 'confirmed', hash: version.hash, blockNumber: 7 });
      await repo.markLost(row.id);
      expect(await repo.findById(row.id)).toMatchObject({ status: 'replaced', finalAt: expect.any(Date) });
      expect((await repo.findAwaitingFinality(CHAIN, 10_000)).some((w) => w.id === row.id)).toBe(false);
    });
  });
});
