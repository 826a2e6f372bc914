import type { TransactionOutcome } from '@facilitator/evm-sending';
import { OutcomeWaits, type PendingOutcome } from './outcome-waits';

/** A provider whose outcomes come when the test mines them; every wait it starts is counted. */
function provider() {
  const blocks = new Map<string, { mine(outcome: TransactionOutcome): void; fail(error: unknown): void }>();
  const started: string[] = [];
  return {
    started,
    waitForOutcome(transactionId: string): Promise<TransactionOutcome> {
      started.push(transactionId);
      return new Promise((mine, fail) => blocks.set(transactionId, { mine, fail }));
    },
    mine: (id: string) => blocks.get(id)!.mine({ status: 'confirmed', hash: `0x${id}`, blockNumber: 7, logs: [] }),
    fail: (id: string, error: unknown) => blocks.get(id)!.fail(error),
  };
}

const pending = (result: TransactionOutcome | PendingOutcome): PendingOutcome => {
  if (result.status !== 'pending') throw new Error(`expected pending, got ${result.status}`);
  return result;
};

describe('OutcomeWaits', () => {
  it('answers pending after the in-slot wait, with one background wait per transaction however many ask', async () => {
    const chain = provider();
    const waits = new OutcomeWaits(chain, { inSlotWaitMs: 1 });
    const first = pending(await waits.within('tx_1', 1));
    const second = pending(await waits.within('tx_1', 1));
    expect(chain.started).toEqual(['tx_1']);
    expect(waits.awaited).toBe(1);

    chain.mine('tx_1');
    await Promise.all([first.known, second.known]);
    expect(waits.awaited).toBe(0);
    // every settlement of a batch gets the one outcome, without a second wait
    await expect(waits.within('tx_1', 1)).resolves.toMatchObject({ status: 'confirmed', hash: '0xtx_1' });
    await expect(waits.within('tx_1', 1)).resolves.toMatchObject({ status: 'confirmed', hash: '0xtx_1' });
    expect(chain.started).toEqual(['tx_1']);
  });

  it('gives an outcome that comes within the in-slot wait at once', async () => {
    const chain = provider();
    const waits = new OutcomeWaits(chain, { inSlotWaitMs: 60_000 });
    const asked = waits.within('tx_1', 1);
    chain.mine('tx_1');
    await expect(asked).resolves.toMatchObject({ status: 'confirmed' });
  });

  it('throws an error that ended the wait to the first that asks, and waits anew for the next', async () => {
    const chain = provider();
    const waits = new OutcomeWaits(chain, { inSlotWaitMs: 1 });
    const asked = pending(await waits.within('tx_1', 1));
    chain.fail('tx_1', new Error('outcome timeout'));
    await asked.known;
    await expect(waits.within('tx_1', 1)).rejects.toThrow('outcome timeout');
    pending(await waits.within('tx_1', 1));
    expect(chain.started).toEqual(['tx_1', 'tx_1']);
  });

  it('keeps an error for the run that comes back for it after an outcome would have been forgotten', async () => {
    const chain = provider();
    const waits = new OutcomeWaits(chain, { inSlotWaitMs: 1, keepOutcomeMs: 1 });
    const asked = pending(await waits.within('tx_1', 1));
    chain.fail('tx_1', new Error('nonce consumed'));
    await asked.known;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(waits.within('tx_1', 1)).rejects.toThrow('nonce consumed');
    expect(chain.started).toEqual(['tx_1']);
  });

  it('gives an error to every run asking at that moment', async () => {
    const chain = provider();
    const waits = new OutcomeWaits(chain, { inSlotWaitMs: 60_000 });
    const asks = [waits.within('tx_1', 1), waits.within('tx_1', 1)];
    chain.fail('tx_1', new Error('outcome timeout'));
    const results = await Promise.allSettled(asks);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  it('lets runs share the in-slot wait only near its start: a run that finds an older wait answers pending at once', async () => {
    // the clock is jest's: "at once" means without any timer firing, not within some wall-clock bound
    jest.useFakeTimers();
    try {
      const chain = provider();
      const waits = new OutcomeWaits(chain, { inSlotWaitMs: 40 });
      let firstAnswered = false;
      const firstAsk = waits.within('tx_1', 1).then((r) => ((firstAnswered = true), r));
      await jest.advanceTimersByTimeAsync(39);
      expect(firstAnswered).toBe(false); // the first run waits in its slot
      await jest.advanceTimersByTimeAsync(1);
      const first = pending(await firstAsk);
      let laterAnswered = false;
      const laterAsk = waits.within('tx_1', 1).then((r) => ((laterAnswered = true), r));
      await jest.advanceTimersByTimeAsync(0); // promise callbacks run; no time passes
      // no second in-slot wait: the answer comes at once, on the same background wait
      expect(laterAnswered).toBe(true);
      const later = pending(await laterAsk);
      expect(later.known).toBe(first.known);
      expect(chain.started).toEqual(['tx_1']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('forgets an outcome nobody came for', async () => {
    const chain = provider();
    const waits = new OutcomeWaits(chain, { inSlotWaitMs: 1, keepOutcomeMs: 1 });
    const asked = pending(await waits.within('tx_1', 1));
    chain.mine('tx_1');
    await asked.known;
    await new Promise((resolve) => setTimeout(resolve, 20));
    pending(await waits.within('tx_1', 1));
    expect(chain.started).toEqual(['tx_1', 'tx_1']);
  });
});
