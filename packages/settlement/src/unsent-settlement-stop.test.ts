import type { SettlementState } from '@facilitator/db';
import { FakeOutbox, FakeSettlementStore, settlementFixture } from './testing/fakes';
import { STOPPABLE_STATES, UnsentSettlementStop } from './unsent-settlement-stop';

function harness(state: SettlementState, claimed = false) {
  const log: string[] = [];
  const store = new FakeSettlementStore(log);
  store.add(settlementFixture({ state, sendClaimedAt: claimed ? new Date() : null }, { webhookUrl: 'https://merchant.example/hook' }));
  const outbox = new FakeOutbox(log);
  return { store, outbox, stop: new UnsentSettlementStop(store, outbox) };
}

describe('UnsentSettlementStop', () => {
  it.each(STOPPABLE_STATES)('stops an unclaimed settlement in %s: failed, nobody charged, its payment released, the merchant told', async (state) => {
    const h = harness(state);
    const { settlement: stopped, stoppedNow } = (await h.stop.stop('stl_1', 'too slow'))!;
    expect(stoppedNow).toBe(true);
    expect(stopped).toMatchObject({ state: 'failed', paymentKey: null, errorCode: 'settlement_failed' });
    expect(stopped.errorDetails).toMatchObject({ reason: 'too slow', stopped_by: 'settle_request', stopped_in: state, merchant_charged: false, customer_charged: false });
    expect(h.outbox.enqueued).toHaveLength(1);
  });

  it('does not stop a settlement the worker claimed for sending, nor one past the states that send nothing', async () => {
    expect(await harness('collect_fee', true).stop.stop('stl_1', 'too slow')).toBeNull();
    for (const state of ['deploying_wallet', 'fee_collected', 'executing'] as const) {
      const h = harness(state);
      expect(await h.stop.stop('stl_1', 'too slow')).toBeNull();
      expect(h.store.rows.get('stl_1')!.state).toBe(state);
    }
  });

  it("does not stop a settlement that someone else's transaction paid, waiting for its confirmations", async () => {
    const h = harness('pending');
    h.store.rows.set('stl_1', { ...h.store.rows.get('stl_1')!, waitingReason: 'execution_confirming', waitingDetail: { tx_hash: '0xtheirs' } });
    expect(await h.stop.stop('stl_1', 'too slow')).toBeNull();
    expect(h.store.rows.get('stl_1')!.state).toBe('pending');
  });

  it('answers a settlement that is final already as it is, writing nothing', async () => {
    const h = harness('settled');
    expect(await h.stop.stop('stl_1', 'too slow')).toMatchObject({ settlement: { state: 'settled' }, stoppedNow: false });
    expect(h.store.transitions).toEqual([]);
  });

  it('follows the worker when it moves the settlement between the read and the write', async () => {
    const h = harness('pending');
    h.store.beforeNextTransition = () => {
      const row = h.store.rows.get('stl_1')!;
      h.store.rows.set('stl_1', { ...row, state: 'check_allowance' });
    };
    expect(await h.stop.stop('stl_1', 'too slow')).toMatchObject({ settlement: { state: 'failed' }, stoppedNow: true });
    expect(h.store.transitions.map((t) => `${t.from}->${t.to}`)).toEqual(['check_allowance->failed']);
  });
});
