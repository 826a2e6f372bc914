// SettlementRequests.start and payment identity: the live settlement of a (payer, nonce) is reported only
// to a request for the same authorization (its fingerprint); another one is refused before anything else.
import { PaymentConflictError } from '@facilitator/core';
import type { NewSettlementRow, Settlement, SettlementRequestStore } from '@facilitator/db';
import { fingerprintOf, SettlementRequests } from './settlement-requests';
import { PAYMENT_FINGERPRINT, settlementFixture, verificationFixture } from './testing/fakes';

type Store = Pick<SettlementRequestStore, 'createOrGetForPayment' | 'feeRevertsOfPayment'>;

/** One payment key at a time, like the unique index: the first insert wins, the rest read it. */
function storeWith(existing?: Settlement) {
  const inserted: NewSettlementRow[] = [];
  const store: Store = {
    async createOrGetForPayment(row) {
      if (existing) return { settlement: existing, created: false };
      inserted.push(row);
      return { settlement: { ...settlementFixture(), id: row.id, authorizationFingerprint: row.authorizationFingerprint, amount: row.amount, feeAmount: row.feeAmount }, created: true };
    },
    async feeRevertsOfPayment() {
      return { count: 0, lastAt: null };
    },
  };
  return { store, inserted };
}

function requestsOver(store: Store) {
  const enqueued: string[] = [];
  const queues = { settlement: { add: async (_name: string, data: { settlementId: string }) => void enqueued.push(data.settlementId) } };
  const requests = new SettlementRequests(store as SettlementRequestStore, queues as never, 10_000n, 60_000);
  return { requests, enqueued };
}

describe('SettlementRequests.start: payment identity', () => {
  it('stores the fingerprint of the authorization with a new settlement', async () => {
    const { store, inserted } = storeWith();
    const { requests } = requestsOver(store);
    const { created } = await requests.start(verificationFixture(), 'v1');
    expect(created).toBe(true);
    expect(inserted[0].authorizationFingerprint).toBe(PAYMENT_FINGERPRINT);
  });

  it("copies the verification's mechanism, scheme, nonce space and payload to the settlement; an older process's row gets the token as its space", async () => {
    const verification = verificationFixture();
    const { store, inserted } = storeWith();
    await requestsOver(store).requests.start(verification, 'v1');
    expect(inserted[0]).toMatchObject({ mechanism: 'exact/eip3009', scheme: 'exact', nonceSpace: verification.tokenAddress, payload: verification.payload });
    expect(inserted[0].payload).toMatchObject({ authorization: { from: verification.payer, nonce: verification.nonce }, signature: verification.signature });

    const older = storeWith();
    await requestsOver(older.store).requests.start(verificationFixture({ nonceSpace: null, payload: null }), 'v1');
    expect(older.inserted[0]).toMatchObject({ nonceSpace: verification.tokenAddress, payload: null });
  });

  it("keys a settlement by its verification's network: an EVM key as before, another family's by its CAIP-2 id and in its case", async () => {
    const evm = storeWith();
    const verification = verificationFixture();
    await requestsOver(evm.store).requests.start(verification, 'v1');
    expect(evm.inserted[0].network).toBe('eip155:84532');
    expect(evm.inserted[0].paymentKey).toBe(`84532:${verification.tokenAddress}:${verification.payer}:${verification.nonce}`.toLowerCase());

    const other = storeWith();
    const network = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
    const [mint, payer] = ['4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM'];
    await requestsOver(other.store).requests.start(verificationFixture({ network, networkName: network, nonceSpace: mint, payer }), 'x402');
    expect(other.inserted[0].network).toBe(network);
    expect(other.inserted[0].paymentKey).toBe(`${network}:${mint}:${payer}:${verification.nonce}`);
  });

  it("stores nothing for a verification a database writer stored with another EVM network than its chain's (no second key of one payment)", async () => {
    // a copy of an honest verification whose network names another chain: its key would not be the honest one's
    for (const network of ['eip155:1', 'EIP155:84532']) {
      const { store, inserted } = storeWith();
      const { requests, enqueued } = requestsOver(store);
      await expect(requests.start(verificationFixture({ network }), 'v1')).rejects.toThrow(/disagree|no chain family/);
      expect(inserted).toEqual([]);
      expect(enqueued).toEqual([]);
    }
  });

  it('answers a repeat of the same authorization with its live settlement', async () => {
    const live = settlementFixture({ state: 'collect_fee' });
    const { requests } = requestsOver(storeWith(live).store);
    const { settlement, created } = await requests.start(verificationFixture({ id: 'ver_repeat' }), 'x402');
    expect(created).toBe(false);
    expect(settlement.id).toBe(live.id);
  });

  it.each(['pending', 'collect_fee', 'settled'] as const)(
    'refuses another authorization with the same payer and nonce while its settlement lives (%s): 409, and enqueues nothing',
    async (state) => {
      const other = settlementFixture({ state, authorizationFingerprint: 'another-authorization', merchant: '0x' + '77'.repeat(20) });
      const { requests, enqueued } = requestsOver(storeWith(other).store);
      const attempt = requests.start(verificationFixture(), 'v1');
      await expect(attempt).rejects.toBeInstanceOf(PaymentConflictError);
      await expect(attempt).rejects.toMatchObject({ status: 409, code: 'payment_conflict' });
      // the other settlement is another merchant's payment: not named
      await expect(attempt).rejects.not.toMatchObject({ details: expect.objectContaining({ settlement_id: other.id }) });
      expect(enqueued).toEqual([]);
    },
  );

  describe('the amount a settlement owns, and its fee (one fee policy, decided here)', () => {
    const upto = () => verificationFixture({ mechanism: 'upto/permit2', scheme: 'upto', amount: '1000000' });

    it('an upto payment settles the amount asked for, within its maximum, and pays the fee only from the fee up', async () => {
      for (const [asked, fee] of [
        [1_000_000n, '10000'],
        [250_000n, '10000'],
        [10_000n, '10000'],
        [9_999n, '0'],
        [1n, '0'],
      ] as const) {
        const { store, inserted } = storeWith();
        const { settlement } = await requestsOver(store).requests.start(upto(), 'x402', asked);
        expect(inserted[0]).toMatchObject({ amount: asked.toString(), feeAmount: fee });
        expect(settlement).toMatchObject({ amount: asked.toString(), feeAmount: fee });
      }
    });

    it('an exact payment settles its signed amount and always pays the fee (its minimum keeps it above)', async () => {
      const { store, inserted } = storeWith();
      await requestsOver(store).requests.start(verificationFixture({ amount: '5000' }), 'v1');
      expect(inserted[0]).toMatchObject({ amount: '5000', feeAmount: '10000' });
    });

    it('never settles an upto maximum for a request that names no amount (Form B names a verification): a 400, nothing stored', async () => {
      const { store, inserted } = storeWith();
      const attempt = requestsOver(store).requests.start(upto(), 'v1');
      await expect(attempt).rejects.toMatchObject({ status: 400, message: expect.stringContaining('settles the amount its merchant names') });
      expect(inserted).toEqual([]);
    });

    it('counts settlements charged no fee: each merchant, and all together, get so many an hour (429 beyond, nothing stored)', async () => {
      const counted: Array<{ merchant: string; since: Date }> = [];
      const withCounts = (merchant: number, all: number) => {
        const { store, inserted } = storeWith();
        const counting = {
          ...store,
          findLiveForPayment: async () => null,
          feeFreeSince: async (m: string, since: Date) => (counted.push({ merchant: m, since }), { merchant, all }),
        };
        const requests = new SettlementRequests(counting as unknown as SettlementRequestStore, { settlement: { add: async () => undefined } } as never, 10_000n, 0, undefined, { perMerchant: 3, total: 10 });
        return { requests, inserted };
      };
      const under = withCounts(2, 9);
      await under.requests.start(upto(), 'x402', 5_000n);
      expect(under.inserted).toHaveLength(1);
      expect(Date.now() - counted[0].since.getTime()).toBeGreaterThanOrEqual(3_600_000 - 1_000);
      for (const [merchant, all] of [[3, 3], [0, 10]]) {
        const over = withCounts(merchant, all);
        await expect(over.requests.start(upto(), 'x402', 5_000n)).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
        expect(over.inserted).toEqual([]);
      }
      // with FEE_AMOUNT=0 every settlement is free, and none is budgeted
      const { store: freeStore, inserted: freeInserted } = storeWith();
      const noFee = new SettlementRequests({ ...freeStore, feeFreeSince: async () => ({ merchant: 99, all: 99 }) } as unknown as SettlementRequestStore, { settlement: { add: async () => undefined } } as never, 0n, 0, undefined, { perMerchant: 3, total: 10 });
      await noFee.start(upto(), 'x402', 5_000n);
      expect(freeInserted).toHaveLength(1);
      // a settlement that pays the fee is not counted
      const charged = withCounts(3, 10);
      await charged.requests.start(upto(), 'x402', 50_000n);
      expect(charged.inserted).toHaveLength(1);
    });

    it('never starts more than the maximum, nor nothing: the x402 parser and the intake refused those', async () => {
      for (const asked of [1_000_001n, 0n]) {
        const { store, inserted } = storeWith();
        await expect(requestsOver(store).requests.start(upto(), 'x402', asked)).rejects.toThrow('cannot settle');
        expect(inserted).toEqual([]);
      }
    });

    it('refuses the same payment asked to settle another amount than its settlement moves: 409, and enqueues nothing', async () => {
      const live = settlementFixture({ state: 'executing', mechanism: 'upto/permit2', amount: '250000' });
      const { requests, enqueued } = requestsOver(storeWith(live).store);
      const attempt = requests.start(upto(), 'x402', 300_000n);
      await expect(attempt).rejects.toBeInstanceOf(PaymentConflictError);
      await expect(attempt).rejects.toMatchObject({ status: 409, details: expect.objectContaining({ settlement_id: live.id, settled_amount: '250000', requested_amount: '300000' }) });
      expect(enqueued).toEqual([]);
      // the same amount again is a repeat: its settlement
      const { settlement, created } = await requests.start(upto(), 'x402', 250_000n);
      expect({ id: settlement.id, created }).toEqual({ id: live.id, created: false });
    });
  });

  it('a verification retention deleted between its lookup and the insert is a 404 (verify again), not a 500', async () => {
    const store: Store = {
      createOrGetForPayment: async () => Promise.reject(Object.assign(new Error('violates foreign key constraint'), { code: '23503' })),
      feeRevertsOfPayment: async () => ({ count: 0, lastAt: null }),
    };
    await expect(requestsOver(store).requests.start(verificationFixture(), 'v1')).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('a verification or settlement stored by an older process (no fingerprint, during a rolling deploy) is judged by its columns', async () => {
    // the verification's fingerprint is computed from its authorization's columns
    const { store, inserted } = storeWith();
    await requestsOver(store).requests.start(verificationFixture({ authorizationFingerprint: null }), 'v1');
    expect(inserted[0].authorizationFingerprint).toBe(fingerprintOf(verificationFixture({ authorizationFingerprint: null })));
    expect(inserted[0].authorizationFingerprint).toMatch(/^[0-9a-f]{64}$/);
    // a settlement without one is this payment when it pays the same merchant the same amount
    const old = settlementFixture({ authorizationFingerprint: null });
    await expect(requestsOver(storeWith(old).store).requests.start(verificationFixture(), 'v1')).resolves.toMatchObject({ created: false });
    const otherMerchant = settlementFixture({ authorizationFingerprint: null, merchant: '0x' + '77'.repeat(20) });
    await expect(requestsOver(storeWith(otherMerchant).store).requests.start(verificationFixture(), 'v1')).rejects.toBeInstanceOf(PaymentConflictError);
  });
});
