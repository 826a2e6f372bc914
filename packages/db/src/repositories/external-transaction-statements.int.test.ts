// Round trip of the rows an external provider sends (ChainTransactionRepository.external) against a real,
// migrated Postgres: every column mapped (nonce null until reported, hashes as a text array, the request's
// age by the database's clock), the claim that a unique key gives one row, and the readers of the table
// that must see such rows like the local keys' ones.
import { randomBytes } from 'node:crypto';
import { IdPrefix, newId } from '@facilitator/core';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database';
import { ChainTransactionRepository, ForeignProviderTransactionError, type NewExternalTransaction } from './chain-transaction-repository';

let db: TestDatabase;
let repo: ChainTransactionRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  repo = new ChainTransactionRepository(db.pool);
});

afterAll(async () => {
  await db?.drop();
});

const CHAIN = 84532;
const PROVIDER = 'openzeppelin-relayer';
const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;

function newExternal(overrides: Partial<NewExternalTransaction> = {}): NewExternalTransaction {
  return {
    settlementId: newId(IdPrefix.Settlement),
    purpose: 'transfer',
    chainId: CHAIN,
    provider: PROVIDER,
    from: hex(20),
    to: hex(20),
    data: `0xe3ee160e${'00'.repeat(64)}`,
    gasLimit: 2n ** 64n + 1n,
    authenticator: '0xab',
    ...overrides,
  };
}

async function inserted(overrides: Partial<NewExternalTransaction> = {}) {
  const row = await repo.external.insert(newExternal(overrides));
  if (!row) throw new Error('not inserted');
  return row;
}

describe('ChainTransactionRepository.external', () => {
  it('stores a row without a nonce before anything is asked, every column mapped, and finds it by key and id', async () => {
    const tx = newExternal();
    const row = await repo.external.insert(tx);
    expect(row).toStrictEqual({
      id: expect.stringMatching(/^ctx_[0-9a-f]{32}$/),
      settlementId: tx.settlementId,
      purpose: 'transfer',
      chainId: CHAIN,
      network: `eip155:${CHAIN}`,
      fromAddress: tx.from,
      toAddress: tx.to,
      data: tx.data,
      nonce: null,
      gasLimit: (2n ** 64n + 1n).toString(),
      authenticator: '0xab',
      status: 'allocated',
      minedHash: null,
      blockNumber: null,
      blockHash: null,
      revertReason: null,
      finalAt: null,
      reorgCount: 0,
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
      provider: PROVIDER,
      providerTransactionId: null,
      providerStatus: null,
      providerStatusReason: null,
      providerHashes: [],
      providerRequestedAt: null,
      requestedAgeMs: null,
    });
    expect(await repo.external.findByKey(tx.settlementId, 'transfer', PROVIDER)).toStrictEqual(row);
    expect(await repo.external.get(row!.id, PROVIDER)).toStrictEqual(row);
    expect(await repo.existsForKey(tx.settlementId, 'transfer')).toBe(true);
    expect(await repo.existsForKey(tx.settlementId, 'fee')).toBe(false);
    // one row per key, across providers
    expect(await repo.external.insert({ ...tx, provider: 'another' })).toBeNull();
  });

  it('refuses to hand a row to another provider, both ways', async () => {
    const row = await inserted();
    await expect(repo.external.get(row.id, 'another')).rejects.toBeInstanceOf(ForeignProviderTransactionError);
    // the local keys' reads refuse it too, with its provider named
    await expect(repo.findByKey(row.settlementId, 'transfer')).rejects.toThrow(/sent by the openzeppelin-relayer provider, not local/);
    const from = hex(20);
    const local = await repo.allocateAndInsert({ settlementId: newId(IdPrefix.Settlement), purpose: 'fee', chainId: CHAIN, from, to: hex(20), data: '0x', gasLimit: 1n, authenticator: '0x' }, 0n);
    await expect(repo.external.findByKey(local!.settlementId, 'fee', PROVIDER)).rejects.toBeInstanceOf(ForeignProviderTransactionError);
  });

  it('times the open request by the database clock, and clears it when the relayer refused', async () => {
    const row = await inserted();
    await repo.external.markRequested(row.id);
    const requested = await repo.external.get(row.id, PROVIDER);
    expect(requested.providerRequestedAt).toBeInstanceOf(Date);
    expect(requested.requestedAgeMs).toBeGreaterThanOrEqual(0);
    expect(requested.requestedAgeMs).toBeLessThan(5_000);
    await repo.external.clearRequested(row.id);
    expect(await repo.external.get(row.id, PROVIDER)).toMatchObject({ providerRequestedAt: null, requestedAgeMs: null });
  });

  it('stores the relayer id once: a second row cannot claim the same one, and a row keeps its first', async () => {
    const [a, b] = [await inserted(), await inserted()];
    await repo.external.markRequested(a.id);
    expect(await repo.external.recordAccepted(a.id, 'relayer-tx-1', 'pending', null)).toBe('stored');
    expect(await repo.external.get(a.id, PROVIDER)).toMatchObject({ providerTransactionId: 'relayer-tx-1', status: 'signed', providerStatus: 'pending', providerRequestedAt: null });
    expect(await repo.external.recordAccepted(b.id, 'relayer-tx-1', 'pending', null)).toBe('taken');
    expect(await repo.external.recordAccepted(a.id, 'relayer-tx-2', 'pending', null)).toBe('stored');
    expect((await repo.external.get(a.id, PROVIDER)).providerTransactionId).toBe('relayer-tx-1');
    expect(await repo.external.claimedAmong(PROVIDER, ['relayer-tx-1', 'relayer-tx-2'])).toEqual(new Set(['relayer-tx-1']));
    expect(await repo.external.claimedAmong('another', ['relayer-tx-1'])).toEqual(new Set());
  });

  it('records progress (hashes appended once, nonce kept once set, never backwards) and the mined version as its attempt', async () => {
    const row = await inserted();
    await repo.external.recordAccepted(row.id, `relayer-${row.id}`, 'pending', null);
    const [first, second] = [hex(32), hex(32)];
    expect(await repo.external.recordProgress(row.id, { providerStatus: 'sent', reason: null, hash: first, nonce: 2n ** 53n + 1n, broadcast: false })).toMatchObject({
      status: 'signed', providerHashes: [first], nonce: 2n ** 53n + 1n,
    });
    await repo.external.recordProgress(row.id, { providerStatus: 'submitted', reason: null, hash: first, nonce: 2n ** 53n + 1n, broadcast: true });
    const progressed = await repo.external.recordProgress(row.id, { providerStatus: 'submitted', reason: 'resubmitted', hash: second, nonce: null, broadcast: true });
    expect(progressed).toMatchObject({ status: 'broadcast', providerStatus: 'submitted', providerStatusReason: 'resubmitted', providerHashes: [first, second], nonce: 2n ** 53n + 1n });
    // the payment's hash, for pending answers, before anything is mined: the newest reported
    expect(await repo.paymentTransactionHashes([row.settlementId])).toEqual(new Map([[row.settlementId, second]]));

    const raw = `0x02f8${randomBytes(90).toString('hex')}`;
    await repo.external.recordMined(row.id, {
      status: 'confirmed', hash: second, blockNumber: 42, blockHash: '0xb42', rawTransaction: raw, fees: { maxFeePerGas: 3n, maxPriorityFeePerGas: 1n },
    });
    expect(await repo.external.recordProgress(row.id, { providerStatus: 'failed', reason: 'late', hash: null, nonce: null, broadcast: false })).toBeNull();
    expect(await repo.external.get(row.id, PROVIDER)).toMatchObject({ status: 'confirmed', minedHash: second, blockNumber: 42n, blockHash: '0xb42', providerStatus: 'submitted' });
    // watched for reorgs like ours, with the mined bytes to send again
    expect((await repo.findAwaitingFinality(CHAIN, 10_000)).find((w) => w.id === row.id)).toMatchObject({ minedHash: second, rawTransaction: raw, blockNumber: 42 });
    expect(await repo.countUnfinishedFrom(CHAIN, row.fromAddress)).toBe(0);
  });

  it('marks a row given up (replaced) only while it is in flight', async () => {
    const row = await inserted();
    expect(await repo.countUnfinishedFrom(CHAIN, row.fromAddress)).toBe(1);
    await repo.external.markGivenUp(row.id, 'failed', 'gave up');
    expect(await repo.external.get(row.id, PROVIDER)).toMatchObject({ status: 'replaced', providerStatus: 'failed', providerStatusReason: 'gave up' });
    expect(await repo.countUnfinishedFrom(CHAIN, row.fromAddress)).toBe(0);
  });

  it('lets one holder of the send lock work at a time, and frees it when the holder is done or fails', async () => {
    const row = await inserted();
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = repo.withExternalSendLock(row.id, async (locked) => {
      order.push('first in');
      await locked.markRequested(row.id);
      await held;
      order.push('first out');
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = repo.withExternalSendLock(row.id, async (locked) => {
      order.push('second in');
      return (await locked.get(row.id, PROVIDER)).providerRequestedAt;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(order).toEqual(['first in']);
    release();
    await first;
    // what the first holder wrote through the lock's connection is committed before the second one reads
    expect(await second).toBeInstanceOf(Date);
    expect(order).toEqual(['first in', 'first out', 'second in']);
    await expect(repo.withExternalSendLock(row.id, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await repo.withExternalSendLock(row.id, async () => 'free again')).toBe('free again');
  });
});
