// The expectations the settlement machine has of its store, run against both of its implementations:
// SettlementStore on Postgres (settlement-store.contract.int.test.ts) and the in-memory
// FakeSettlementStore the unit tests use (fake-settlement-store.test.ts). A rule the fake gets wrong
// would make every unit test built on it prove nothing; this suite is what holds it to the real one.
import type { FeeReservationRequest, Settlement, Verification } from '@facilitator/db';
import { settlementWithVerification } from '@facilitator/db/testing';
import type { SettlementMachineStore } from '../settlement-machine';
import type { SettlementWithVerification } from '../step';

export interface StoreUnderTest {
  store: SettlementMachineStore;
  /** stores a settlement and its verification as they are: state, timestamps and all */
  seed(row: SettlementWithVerification): Promise<void>;
  /** the settlement's history rows written since it was seeded, oldest first */
  history(id: string): Promise<Array<{ from: string | null; to: string; note: unknown }>>;
  close?(): Promise<void>;
}

const CHAIN = 84532;
const TOKEN = '0x036cbd53842c5426634e7929541ec2318f3dcf7e';
const OTHER_TOKEN = '0x833589fcd6e4b24b4be8d3bb2a5ec2a7c3b7a8b0';
const HOUR = 3_600_000;

export function settlementStoreContract(name: string, open: () => Promise<StoreUnderTest>): void {
  describe(`${name} keeps the settlement store's contract`, () => {
    let t: StoreUnderTest;
    beforeAll(async () => {
      t = await open();
    });
    afterAll(async () => {
      await t?.close?.();
    });

    // every settlement of the suite its own payment, payer and merchant unless a test shares them
    let serial = 0;
    const address = (n: number) => '0x' + n.toString(16).padStart(40, '0');
    async function seeded(fields: Partial<Settlement> = {}, verification: Partial<Verification> = {}): Promise<SettlementWithVerification> {
      const n = ++serial;
      const nonce = '0x' + n.toString(16).padStart(64, '0');
      const row = settlementWithVerification(
        {
          id: `stl_contract_${n}`,
          verificationId: `ver_contract_${n}`,
          paymentKey: `${CHAIN}:${TOKEN}:payer:${nonce}`,
          chainId: CHAIN,
          tokenAddress: TOKEN,
          payer: address(0x10000 + n),
          merchant: address(0x20000 + n),
          nonce,
          ...fields,
        },
        verification,
      );
      await t.seed(row);
      return row;
    }
    const stateOf = async (id: string) => (await t.store.findWithVerification(id))!.state;

    describe('findWithVerification', () => {
      it('reads a settlement back with its verification, every column as stored', async () => {
        const at = new Date('2025-02-03T04:05:06.789Z');
        const row = await seeded(
          {
            state: 'executing',
            feeTxHash: '0x' + 'fe'.repeat(32),
            feeCollectedAt: at,
            errorDetails: { attempts: [1, 2], why: 'x' },
            waitingReason: 'gas_above_cap',
            waitingSince: at,
            waitingDetail: { baseFee: '5' },
            settlementMode: 'sequential',
            sendClaimedAt: at,
            reorgCount: 2,
            metadata: { order: 'A-17', tags: ['a'] },
          },
          { request: { paymentRequirements: { amount: '1000000' } }, metadata: { order: 'A-17' }, webhookUrl: 'https://merchant.example/hook' },
        );
        expect(await t.store.findWithVerification(row.id)).toStrictEqual(row);
        expect(await t.store.findWithVerification('stl_missing')).toBeNull();
      });
    });

    describe('transition', () => {
      it('moves only from the expected state: writes the fields given and one history row, clears the wait, and returns the row', async () => {
        const row = await seeded({ state: 'check_allowance', waitingReason: 'no_funded_relayer', waitingSince: new Date(), waitingDetail: { relayers: 2 } });
        expect(await t.store.transition({ id: row.id, from: 'pending', to: 'collect_fee' })).toBeNull();
        expect(await t.store.findWithVerification(row.id)).toStrictEqual(row);
        expect(await t.history(row.id)).toEqual([]);

        const moved = await t.store.transition({
          id: row.id,
          from: 'check_allowance',
          to: 'collect_fee',
          data: { settlementMode: 'sequential', errorDetails: { list: [1, 'b'], nested: { ok: true } }, errorCode: 'x' },
          note: { by: 'contract' },
        });
        const { verification, ...before } = row;
        expect(moved).toStrictEqual({
          ...before,
          state: 'collect_fee',
          settlementMode: 'sequential',
          errorDetails: { list: [1, 'b'], nested: { ok: true } },
          errorCode: 'x',
          waitingReason: null,
          waitingSince: null,
          waitingDetail: null,
          updatedAt: expect.any(Date),
        });
        expect(moved!.updatedAt.getTime()).toBeGreaterThan(row.updatedAt.getTime());
        expect(await t.store.findWithVerification(row.id)).toStrictEqual({ ...moved, verification });
        expect(await t.history(row.id)).toEqual([{ from: 'check_allowance', to: 'collect_fee', note: { by: 'contract' } }]);

        // the same move again finds it moved on
        expect(await t.store.transition({ id: row.id, from: 'check_allowance', to: 'collect_fee' })).toBeNull();
        expect(await t.history(row.id)).toHaveLength(1);
        expect(await t.store.transition({ id: 'stl_missing', from: 'pending', to: 'failed' })).toBeNull();
      });

      it('passes through intermediate states in one step: the final state, every field, and one history row per step in order', async () => {
        const row = await seeded({ state: 'collect_fee', settlementMode: 'atomic' });
        const hash = '0x' + 'ab'.repeat(32);
        const through = [
          { state: 'fee_collected' as const, note: { fee_tx_hash: hash } },
          { state: 'executing' as const },
        ];
        // from a state the row is not in: nothing moves, no history
        expect(await t.store.transition({ id: row.id, from: 'pending', to: 'settled', through })).toBeNull();
        expect(await t.history(row.id)).toEqual([]);

        const settledAt = new Date('2025-02-03T04:05:06.789Z');
        const moved = await t.store.transition({
          id: row.id,
          from: 'collect_fee',
          to: 'settled',
          through,
          data: { feeTxHash: hash, settlementTxHash: hash, settledAt, merchantPaid: true },
          note: { tx_hash: hash },
        });
        expect(moved).toMatchObject({ state: 'settled', feeTxHash: hash, settlementTxHash: hash, settledAt, merchantPaid: true });
        expect(await stateOf(row.id)).toBe('settled');
        expect(await t.history(row.id)).toEqual([
          { from: 'collect_fee', to: 'fee_collected', note: { fee_tx_hash: hash } },
          { from: 'fee_collected', to: 'executing', note: null },
          { from: 'executing', to: 'settled', note: { tx_hash: hash } },
        ]);
        // taken once: the same request again finds it moved on
        expect(await t.store.transition({ id: row.id, from: 'collect_fee', to: 'settled', through })).toBeNull();
        expect(await t.history(row.id)).toHaveLength(3);
      });

      it('records the fee the chain took when it is not the stored one (the one rewrite of a settlement\'s fee)', async () => {
        const row = await seeded({ state: 'collect_fee', settlementMode: 'atomic', feeAmount: '10000' });
        const moved = await t.store.transition({ id: row.id, from: 'collect_fee', to: 'fee_collected', data: { feeTxHash: '0x' + 'fe'.repeat(32), feeAmount: '20000' } });
        expect(moved).toMatchObject({ state: 'fee_collected', feeAmount: '20000' });
        expect((await t.store.findWithVerification(row.id))!.feeAmount).toBe('20000');
      });

      it('writes null to clear a field and leaves the fields not given alone', async () => {
        const row = await seeded({ state: 'collect_fee', feeTxHash: '0x' + 'fe'.repeat(32), errorMessage: 'earlier' });
        const moved = await t.store.transition({ id: row.id, from: 'collect_fee', to: 'failed', data: { feeTxHash: null, errorCode: 'fee_collection_failed' } });
        expect(moved).toMatchObject({ state: 'failed', feeTxHash: null, errorCode: 'fee_collection_failed', errorMessage: 'earlier', feeAmount: row.feeAmount });
        expect(await t.history(row.id)).toEqual([{ from: 'collect_fee', to: 'failed', note: null }]);
      });

      it('with onlyUnclaimed, refuses a settlement claimed for sending and moves an unclaimed one', async () => {
        const claimed = await seeded({ state: 'collect_fee' });
        expect(await t.store.claimSend(claimed.id)).toBe(true);
        expect(await t.store.transition({ id: claimed.id, from: 'collect_fee', to: 'failed', onlyUnclaimed: true })).toBeNull();
        expect(await stateOf(claimed.id)).toBe('collect_fee');
        expect(await t.history(claimed.id)).toEqual([]);

        const unclaimed = await seeded({ state: 'collect_fee' });
        expect(await t.store.transition({ id: unclaimed.id, from: 'collect_fee', to: 'failed', onlyUnclaimed: true })).toMatchObject({ state: 'failed' });
        expect(await t.store.claimSend(unclaimed.id)).toBe(false);
      });

      it("with onlyUnclaimed, refuses a settlement waiting for the confirmations of someone else's transaction that paid it", async () => {
        const paid = await seeded({ state: 'pending' });
        expect(await t.store.markWaiting(paid.id, 'pending', 'execution_confirming', { tx_hash: '0x' + 'ee'.repeat(32) })).toBe(true);
        expect(await t.store.transition({ id: paid.id, from: 'pending', to: 'failed', onlyUnclaimed: true })).toBeNull();
        expect(await stateOf(paid.id)).toBe('pending');
      });
    });

    describe('claimSend', () => {
      it('claims a live settlement once (the first time is kept), and never a final or unknown one', async () => {
        const live = await seeded({ state: 'check_allowance' });
        expect(await t.store.claimSend(live.id)).toBe(true);
        const claimedAt = (await t.store.findWithVerification(live.id))!.sendClaimedAt;
        expect(claimedAt).toBeInstanceOf(Date);
        expect(await t.store.claimSend(live.id)).toBe(true);
        expect((await t.store.findWithVerification(live.id))!.sendClaimedAt).toEqual(claimedAt);

        for (const state of ['settled', 'failed'] as const) {
          const final = await seeded({ state });
          expect(await t.store.claimSend(final.id)).toBe(false);
          expect((await t.store.findWithVerification(final.id))!.sendClaimedAt).toBeNull();
        }
        expect(await t.store.claimSend('stl_missing')).toBe(false);
      });
    });

    describe('transitionReservingFee', () => {
      const reserve = (s: SettlementWithVerification, limits: Partial<FeeReservationRequest>) =>
        t.store.transitionReservingFee(
          { id: s.id, from: 'check_allowance', to: 'collect_fee', data: { settlementMode: 'sequential' } },
          { merchant: s.merchant, chainId: s.chainId, tokenAddress: s.tokenAddress, fee: 20n, allowance: 1_000_000n, balance: 1_000_000n, ...limits },
        );

      it("moves only while the merchant's fees in flight (in collect_fee, same chain and token, itself excluded) plus this one fit in min(allowance, balance)", async () => {
        const merchant = address(0x30001);
        await seeded({ merchant, state: 'collect_fee', feeAmount: '30' });
        await seeded({ merchant, state: 'collect_fee', feeAmount: '1000', tokenAddress: OTHER_TOKEN });
        await seeded({ merchant, state: 'collect_fee', feeAmount: '1000', chainId: 8453 });
        await seeded({ merchant, state: 'fee_collected', feeAmount: '1000' });
        await seeded({ merchant: address(0x30002), state: 'collect_fee', feeAmount: '1000' });
        const s = await seeded({ merchant, state: 'check_allowance', feeAmount: '20' });

        expect(await reserve(s, { allowance: 49n, balance: 100n })).toEqual({ moved: null, inFlight: 30n });
        expect(await reserve(s, { allowance: 100n, balance: 49n })).toEqual({ moved: null, inFlight: 30n });
        expect(await stateOf(s.id)).toBe('check_allowance');
        expect(await t.history(s.id)).toEqual([]);

        const { moved, inFlight } = await reserve(s, { allowance: 50n, balance: 50n });
        expect(inFlight).toBe(30n);
        expect(moved).toMatchObject({ id: s.id, state: 'collect_fee', settlementMode: 'sequential' });
        expect(await t.history(s.id)).toEqual([{ from: 'check_allowance', to: 'collect_fee', note: null }]);
        // moved on: the compare-and-set refuses, however much is spendable; itself is not counted
        expect(await reserve(s, {})).toEqual({ moved: null, inFlight: 30n });
      });

      it("moves only while the payer's value in flight (its sending states, any merchant, this token) plus this payment fit in its balance, under its cap", async () => {
        const payer = address(0x40001);
        await seeded({ payer, state: 'fee_collected', amount: '300' });
        await seeded({ payer, state: 'executing', amount: '200' });
        await seeded({ payer, state: 'collect_fee', amount: '1000', tokenAddress: OTHER_TOKEN });
        await seeded({ payer, state: 'check_allowance', amount: '1000' });
        await seeded({ payer, state: 'settled', amount: '1000' });
        const s = await seeded({ payer, state: 'check_allowance', amount: '100' });
        const ofPayer = (limits: { balance: bigint; maxInFlight?: number }) => reserve(s, { payer: { address: payer, value: 100n, ...limits } });

        expect(await ofPayer({ balance: 599n })).toEqual({ moved: null, inFlight: 0n, payer: { value: 500n, items: 2, failures: 0, lastFailureAt: null } });
        expect((await ofPayer({ balance: 600n, maxInFlight: 2 })).moved).toBeNull();
        expect(await stateOf(s.id)).toBe('check_allowance');
        const reserved = await ofPayer({ balance: 600n, maxInFlight: 3 });
        expect(reserved.moved).toMatchObject({ state: 'collect_fee' });
        expect(reserved.payer).toEqual({ value: 500n, items: 2, failures: 0, lastFailureAt: null });
      });

      it('refuses a payer paused by its costly failures since the time given, and names the latest', async () => {
        const payer = address(0x50001);
        const lastFailure = new Date(Date.now() - HOUR / 2);
        const failed = { payer, state: 'failed' as const, merchantPaid: false };
        // costly: our fee was sent and the payer's transfer then failed
        await seeded({ ...failed, errorCode: 'settlement_failed', feeTxHash: '0x' + 'fe'.repeat(32), updatedAt: new Date(Date.now() - HOUR / 4 - HOUR / 2) });
        await seeded({ ...failed, errorCode: 'settlement_failed', errorDetails: { tx_hash: '0x' + '01'.repeat(32) }, updatedAt: lastFailure });
        // not counted: the merchant's fee revert, a failure before anything was sent, one that paid the merchant, one too old
        await seeded({ ...failed, errorCode: 'fee_collection_failed', feeTxHash: '0x' + 'fe'.repeat(32), updatedAt: lastFailure });
        await seeded({ ...failed, errorCode: 'settlement_failed', updatedAt: lastFailure });
        await seeded({ ...failed, errorCode: 'settlement_failed', feeTxHash: '0x' + 'fe'.repeat(32), errorDetails: { merchant_paid: true }, updatedAt: lastFailure });
        await seeded({ ...failed, errorCode: 'settlement_failed', feeTxHash: '0x' + 'fe'.repeat(32), updatedAt: new Date(Date.now() - 2 * HOUR) });
        const s = await seeded({ payer, state: 'check_allowance', amount: '100' });
        const paused = (afterFailures: number) =>
          reserve(s, { payer: { address: payer, value: 100n, balance: 1_000n, pause: { afterFailures, since: new Date(Date.now() - HOUR) } } });

        expect(await paused(2)).toEqual({ moved: null, inFlight: 0n, payer: { value: 0n, items: 0, failures: 2, lastFailureAt: lastFailure } });
        expect(await stateOf(s.id)).toBe('check_allowance');
        expect((await paused(3)).moved).toMatchObject({ state: 'collect_fee' });
      });
    });

    describe('markWaiting', () => {
      it('shows a wait only in the given state, and keeps its start while the reason holds', async () => {
        const row = await seeded({ state: 'executing' });
        expect(await t.store.markWaiting(row.id, 'collect_fee', 'gas_above_cap', {})).toBe(false);
        expect(await t.store.findWithVerification(row.id)).toStrictEqual(row);
        expect(await t.store.markWaiting('stl_missing', 'executing', 'gas_above_cap', {})).toBe(false);

        expect(await t.store.markWaiting(row.id, 'executing', 'gas_above_cap', { baseFee: '5' })).toBe(true);
        const first = (await t.store.findWithVerification(row.id))!;
        expect(first).toMatchObject({ state: 'executing', waitingReason: 'gas_above_cap', waitingDetail: { baseFee: '5' } });
        expect(first.waitingSince).toBeInstanceOf(Date);
        expect(first.updatedAt.getTime()).toBeGreaterThan(row.updatedAt.getTime());

        expect(await t.store.markWaiting(row.id, 'executing', 'gas_above_cap', { baseFee: '7' })).toBe(true);
        expect(await t.store.findWithVerification(row.id)).toStrictEqual({ ...first, waitingDetail: { baseFee: '7' } });

        expect(await t.store.markWaiting(row.id, 'executing', 'no_funded_relayer', {})).toBe(true);
        const next = (await t.store.findWithVerification(row.id))!;
        expect(next).toMatchObject({ waitingReason: 'no_funded_relayer', waitingDetail: {} });
        expect(next.waitingSince!.getTime()).toBeGreaterThanOrEqual(first.waitingSince!.getTime());
      });
    });

    describe('attention', () => {
      it('parks a settlement with its reason (at most 1,000 characters) and clears it', async () => {
        const row = await seeded({ state: 'executing' });
        await t.store.markNeedsAttention(row.id, 'executing: transient error: ' + 'x'.repeat(2_000));
        const parked = (await t.store.findWithVerification(row.id))!;
        expect(parked.attentionReason).toBe(('executing: transient error: ' + 'x'.repeat(2_000)).slice(0, 1_000));
        expect(parked.attentionAt).toBeInstanceOf(Date);
        expect(parked.state).toBe('executing');

        const cleared = await t.store.clearAttention(row.id);
        expect(cleared).toMatchObject({ id: row.id, state: 'executing', attentionReason: null, attentionAt: null });
        expect(cleared).not.toHaveProperty('verification');
        const { verification: _verification, ...stored } = (await t.store.findWithVerification(row.id))!;
        expect(cleared).toStrictEqual(stored);
        expect(await t.store.clearAttention('stl_missing')).toBeNull();
      });
    });

    describe('feeRevertsOfMerchant', () => {
      it("counts the merchant's fee transfers that were sent and reverted on this chain since a time, with the latest", async () => {
        const merchant = address(0x60001);
        const since = new Date(Date.now() - HOUR);
        const latest = new Date(Date.now() - HOUR / 4);
        const revert = { merchant, state: 'failed' as const, errorCode: 'fee_collection_failed', feeTxHash: '0x' + 'fe'.repeat(32) };
        await seeded({ ...revert, updatedAt: new Date(Date.now() - HOUR / 2) });
        await seeded({ ...revert, updatedAt: latest });
        // not counted: never sent, another failure, another merchant, another chain, before `since`
        await seeded({ ...revert, feeTxHash: null, updatedAt: latest });
        await seeded({ ...revert, errorCode: 'settlement_failed', updatedAt: latest });
        await seeded({ ...revert, merchant: address(0x60002), updatedAt: latest });
        await seeded({ ...revert, chainId: 8453, updatedAt: latest });
        await seeded({ ...revert, updatedAt: new Date(Date.now() - 2 * HOUR) });

        expect(await t.store.feeRevertsOfMerchant(merchant, CHAIN, since)).toEqual({ count: 2, lastAt: latest });
        expect(await t.store.feeRevertsOfMerchant(merchant, CHAIN, new Date())).toEqual({ count: 0, lastAt: null });
      });
    });
  });
}
