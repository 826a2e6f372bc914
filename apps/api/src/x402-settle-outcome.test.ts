import type { Settlement } from '@facilitator/db';
import { SettlementWaiter, type SettlementProgress } from './settlement-waiter';
import { x402SettleOutcome } from './x402-settle-outcome';

const row = (id: string, state: Settlement['state'], sendClaimedAt: Date | null = null, transferDecision: string | null = null) =>
  ({ id, state, sendClaimedAt, transferDecision }) as Settlement;

/** One settlement in memory as the worker moves it, a real waiter over it, and a stop that the worker's claim can beat. */
function harness(options: { waitMs: number; deadlineMs: number; claimedGraceMs?: number }) {
  let state: Settlement['state'] = 'collect_fee';
  let hash: string | null = null;
  let claimed = false;
  let decision: string | null = null;
  const stops: string[] = [];
  const waits = new SettlementWaiter({
    readProgress: async (ids): Promise<SettlementProgress[]> => ids.map((id) => ({ settlement: row(id, state, claimed ? new Date(0) : null, decision), transactionHash: hash })),
    timeoutMs: options.waitMs,
    maxWaiters: 10,
    pollIntervalMs: 5,
  });
  const stop = {
    async stop(id: string) {
      stops.push(id);
      if (claimed || !['pending', 'check_allowance', 'collect_fee'].includes(state)) return null;
      state = 'failed';
      return { settlement: row(id, 'failed'), stoppedNow: true };
    },
  };
  // SettlementRequestStore.withholdTransfer: a sequential settlement past its fee's claim whose transfer the worker has not committed to
  const transfers = {
    async withholdTransfer() {
      if (!claimed || !['collect_fee', 'fee_collected'].includes(state) || decision === 'send') return false;
      decision = 'withheld';
      return true;
    },
  };
  const deps = { waits, stop, transfers, maxHoldMs: options.deadlineMs, claimedGraceMs: options.claimedGraceMs };
  return {
    stops,
    answer: (created = true, retriesPending = true) => x402SettleOutcome(deps, { settlement: row('stl_1', 'collect_fee'), created }, Date.now(), retriesPending),
    sign: (h: string) => (hash = h),
    claim: () => (claimed = true),
    /** the worker's claimTransfer: false once the request withheld it */
    commitTransfer: () => decision !== 'withheld' && (decision = 'send') === 'send',
    decision: () => decision,
    moveTo: (to: Settlement['state']) => (state = to),
    settle: () => (state = 'settled'),
    close: () => waits.close(),
  };
}

describe('x402SettleOutcome: a pending answer always names its transaction', () => {
  it('answers the outcome when it comes within the wait', async () => {
    const h = harness({ waitMs: 2_000, deadlineMs: 2_000 });
    setTimeout(() => h.settle(), 30);
    expect((await h.answer()).settlement.state).toBe('settled');
    expect(h.stops).toEqual([]);
    h.close();
  });

  it('answers pending with the hash when the wait ends with the transaction signed, and stops nothing', async () => {
    const h = harness({ waitMs: 50, deadlineMs: 5_000 });
    h.sign('0xfeed');
    expect(await h.answer()).toEqual({ settlement: row('stl_1', 'collect_fee'), transactionHash: '0xfeed' });
    expect(h.stops).toEqual([]);
    h.close();
  });

  it('keeps the request past the wait until the transaction is signed, within the deadline', async () => {
    const h = harness({ waitMs: 20, deadlineMs: 5_000 });
    setTimeout(() => h.sign('0xbeef'), 150);
    expect((await h.answer()).transactionHash).toBe('0xbeef');
    expect(h.stops).toEqual([]);
    h.close();
  });

  it('holds a repeat of a payment whose transaction is signed (the middleware\'s retry) until it is mined, past the usual wait', async () => {
    const h = harness({ waitMs: 20, deadlineMs: 5_000 });
    h.sign('0xfeed');
    setTimeout(() => h.settle(), 200);
    expect((await h.answer(false)).settlement.state).toBe('settled');
    // a first request of the same is answered pending at the end of its wait, with the hash
    const other = harness({ waitMs: 20, deadlineMs: 5_000 });
    other.sign('0xfeed');
    setTimeout(() => other.settle(), 200);
    expect(await other.answer(true)).toEqual({ settlement: row('stl_1', 'collect_fee'), transactionHash: '0xfeed' });
    h.close();
    other.close();
  });

  it('holds an x402 v1 request (its middleware does not retry a pending answer) for the outcome, not only the hash', async () => {
    const h = harness({ waitMs: 20, deadlineMs: 5_000 });
    h.sign('0xfeed');
    setTimeout(() => h.settle(), 200);
    expect((await h.answer(true, false)).settlement.state).toBe('settled');
    h.close();
  });

  it('stops a settlement that signed nothing by the deadline, and answers it failed', async () => {
    const h = harness({ waitMs: 20, deadlineMs: 100 });
    const answer = await h.answer();
    expect(answer).toEqual({ settlement: row('stl_1', 'failed'), transactionHash: null });
    expect(h.stops).toEqual(['stl_1']);
    h.close();
  });

  it('when the worker claimed it first, waits for the hash it is signing instead of stopping it', async () => {
    const h = harness({ waitMs: 20, deadlineMs: 60, claimedGraceMs: 5_000 });
    h.claim();
    setTimeout(() => h.sign('0xcafe'), 200);
    expect(await h.answer()).toEqual({ settlement: row('stl_1', 'collect_fee', new Date(0)), transactionHash: '0xcafe' });
    expect(h.stops).toEqual(['stl_1']);
    h.close();
  });

  it('holds a settlement that is deploying a wallet (nothing of the payer sent, not stoppable) and stops it once it is back before its fee', async () => {
    const h = harness({ waitMs: 20, deadlineMs: 60, claimedGraceMs: 5_000 });
    h.moveTo('deploying_wallet');
    setTimeout(() => h.moveTo('check_allowance'), 200);
    const started = Date.now();
    const answer = await h.answer();
    expect(answer).toEqual({ settlement: row('stl_1', 'failed'), transactionHash: null });
    // not answered (pending, with no transaction of the payment's to name) while it deployed
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(h.stops).toEqual(['stl_1', 'stl_1']);
    h.close();
  });

  it("holds a settlement whose sequential fee is on its way until its transfer is signed, and names only the transfer", async () => {
    const h = harness({ waitMs: 20, deadlineMs: 60, claimedGraceMs: 5_000 });
    h.claim();
    setTimeout(() => h.moveTo('fee_collected'), 100);
    setTimeout(() => h.sign('0x7a7a'), 250);
    const answer = await h.answer();
    expect(answer.transactionHash).toBe('0x7a7a');
    h.close();
  });

  it('withholds the transfer of a sequential settlement whose fee is not confirmed when the grace ends, and answers it failed, never pending without a hash', async () => {
    const h = harness({ waitMs: 20, deadlineMs: 60, claimedGraceMs: 100 });
    h.claim();
    setTimeout(() => h.moveTo('fee_collected'), 50);
    const answer = await h.answer();
    expect(answer).toMatchObject({ transferWithheld: true, transactionHash: null });
    // the worker, once the fee is confirmed, may no longer sign the transfer
    expect(h.decision()).toBe('withheld');
    expect(h.commitTransfer()).toBe(false);
    h.close();
  });

  it('when the worker committed to the transfer first, waits for its hash instead of withholding it', async () => {
    const h = harness({ waitMs: 20, deadlineMs: 60, claimedGraceMs: 100 });
    h.claim();
    h.moveTo('fee_collected');
    setTimeout(() => h.commitTransfer(), 90);
    setTimeout(() => h.sign('0x7a7a'), 400);
    const answer = await h.answer();
    expect(answer.transferWithheld).toBeUndefined();
    expect(answer.transactionHash).toBe('0x7a7a');
    h.close();
  });
});
