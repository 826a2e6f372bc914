import type { NewSettlementBatch, StoredSettlementBatch } from '@facilitator/db';
import { OutcomeWaits } from '../outcome-waits';
import type { SubmittedTransaction, TransactionOutcome, TransactionProvider, TransactionRequest } from '@facilitator/evm-sending';
import { executorInterface, settleCalldata, type ExecutorItem } from '@facilitator/evm-executor';
import { Interface } from 'ethers';
import { itemCalldataGas } from '@facilitator/evm-executor';
import { BATCH_OVERHEAD_GAS, ExecutorBatches, gasCapOf, itemEnvelope, ItemRefusedError, NoFundedRelayerError, StoredBatchRefusedError, type ExecutorBatchesOptions } from './executor-batches';
import { SettlementEndedError } from '../settlement-ended';

const TREASURY = '0x' + '11'.repeat(20);
const RELAYER = '0x' + '22'.repeat(20);
const CHAIN = 84532;

// an item whose call carries a signature of this many bytes (a contract wallet's may be kilobytes)
function item(n: number, gas = 250_000n, signatureBytes = 65, payer = '0x' + '33'.repeat(20)): ExecutorItem {
  const data = '0xcf092995' + '00'.repeat(7 * 32) + 'ab'.repeat(signatureBytes);
  return { payer, merchant: '0x' + '44'.repeat(20), amount: 10_000n, nonce: '0x' + n.toString(16).padStart(64, '0'), target: '0x' + '55'.repeat(20), data, gas };
}

/** Batches in memory, transactions recorded: what the batcher stores and sends, in order. */
function harness(overrides: Partial<ExecutorBatchesOptions> = {}) {
  const stored: StoredSettlementBatch[] = [];
  const placed = new Map<string, StoredSettlementBatch>();
  const members = new Map<string, string[]>();
  const submitted: TransactionRequest[] = [];
  const log: string[] = [];
  // settlements a settle request stopped: the repository refuses to claim them for a batch
  const endedSettlements = new Set<string>();
  let nextId = 0;
  const transactions: Pick<TransactionProvider, 'submit' | 'find' | 'waitForOutcome'> = {
    async find() {
      return null;
    },
    async submit(request: TransactionRequest): Promise<SubmittedTransaction> {
      submitted.push(request);
      log.push(`send ${request.settlementId}`);
      return { id: `ctx_${request.settlementId}`, from: request.from, nonce: 0n, hash: '0xaa', hashes: ['0xaa'] };
    },
    async waitForOutcome(): Promise<TransactionOutcome> {
      return { status: 'confirmed', hash: '0xaa', blockNumber: 1, logs: [] };
    },
  };
  const options: ExecutorBatchesOptions = {
    batches: {
      async create(batch: NewSettlementBatch) {
        if (batch.settlementIds.some((id) => placed.has(id))) return { stored: false as const, ended: [] };
        const ended = batch.settlementIds.filter((id) => endedSettlements.has(id));
        if (ended.length > 0) return { stored: false as const, ended };
        const row = { id: `bat_${++nextId}`, chainId: batch.chainId, relayer: batch.relayer, to: batch.to, data: batch.data, gasCap: batch.gasCap, itemCount: batch.settlementIds.length };
        stored.push(row);
        members.set(row.id, [...batch.settlementIds]);
        for (const id of batch.settlementIds) placed.set(id, row);
        log.push(`store ${row.id} [${batch.settlementIds.join(',')}]`);
        return row;
      },
      async ofSettlement(id: string) {
        return placed.get(id) ?? null;
      },
      async alreadyBatched(ids: readonly string[]) {
        return new Set(ids.filter((id) => placed.has(id)));
      },
      async settlementsOf(batchId: string) {
        return members.get(batchId) ?? [];
      },
    },
    isRelayer: (_chainId, address) => address === RELAYER,
    itemProblem: async () => undefined,
    transactions,
    outcomes: new OutcomeWaits(transactions),
    treasury: TREASURY,
    nextRelayer: async () => RELAYER,
    gasBudget: () => 6_000_000n,
    ...overrides,
  };
  // the batcher holds `options` itself: a test changes a dependency's behaviour through it
  return { batcher: new ExecutorBatches(options), options, transactions, stored, placed, members, submitted, log, endedSettlements };
}

describe('ExecutorBatches', () => {
  it('puts items that are ready together in one batch, stored before it is sent, to the treasury from a relayer', async () => {
    const h = harness();
    const batches = await Promise.all([1, 2, 3].map((n) => h.batcher.place({ settlementId: `stl_${n}`, chainId: CHAIN, item: item(n) })));
    expect(new Set(batches.map((b) => b.id))).toEqual(new Set(['bat_1']));
    expect(h.log).toEqual(['store bat_1 [stl_1,stl_2,stl_3]', 'send bat_1']);
    // signed with every item's whole envelope: an item that burns all its gas cannot starve the next
    const envelopes = BATCH_OVERHEAD_GAS + 3n * itemEnvelope(item(1));
    expect(h.submitted[0]).toMatchObject({ settlementId: 'bat_1', purpose: 'settle', chainId: CHAIN, from: RELAYER, to: TREASURY, gasCap: envelopes, gasLimit: envelopes });
    expect(itemEnvelope(item(1))).toBeGreaterThan((250_000n * 64n) / 63n);
    const [items] = executorInterface.decodeFunctionData('settle', h.submitted[0].data);
    expect(items.map((i: { nonce: string }) => i.nonce)).toEqual([item(1).nonce, item(2).nonce, item(3).nonce]);
  });

  it('leaves out an item whose settlement a settle request stopped meanwhile: it learns so, the others are batched and sent without it', async () => {
    const h = harness();
    h.endedSettlements.add('stl_2');
    const placed = [1, 2, 3].map((n) => h.batcher.place({ settlementId: `stl_${n}`, chainId: CHAIN, item: item(n) }).then(
      (batch) => batch.id,
      (error: unknown) => error,
    ));
    const [one, two, three] = await Promise.all(placed);
    expect(two).toBeInstanceOf(SettlementEndedError);
    expect([one, three]).toEqual(['bat_1', 'bat_1']);
    expect(h.log).toEqual(['store bat_1 [stl_1,stl_3]', 'send bat_1']);
    const [items] = executorInterface.decodeFunctionData('settle', h.submitted[0].data);
    expect(items.map((i: { nonce: string }) => i.nonce)).toEqual([item(1).nonce, item(3).nonce]);
  });

  it('gathers the items that arrive while a batch is being sent into the next one', async () => {
    let release!: () => void;
    const h = harness();
    const submit = h.options.transactions.submit;
    let first = true;
    h.options.transactions.submit = async (request) => {
      if (first) {
        first = false;
        await new Promise<void>((resolve) => (release = resolve));
      }
      return submit(request);
    };
    const one = h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) });
    while (!release) await new Promise((r) => setImmediate(r));
    const later = [2, 3, 4].map((n) => h.batcher.place({ settlementId: `stl_${n}`, chainId: CHAIN, item: item(n) }));
    release();
    await Promise.all([one, ...later]);
    expect(h.stored.map((b) => b.itemCount)).toEqual([1, 3]);
  });

  it('with parallel formations, a second batch is stored and sent while the first is still being sent', async () => {
    const h = harness({ parallel: 2 });
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    let firstSubmitting!: () => void;
    const firstInFlight = new Promise<void>((resolve) => (firstSubmitting = resolve));
    let secondSubmitting!: () => void;
    const secondInFlight = new Promise<void>((resolve) => (secondSubmitting = resolve));
    const submit = h.options.transactions.submit;
    h.options.transactions.submit = async (request) => {
      const call = ++calls;
      most = Math.max(most, ++inFlight);
      if (call === 1) {
        firstSubmitting();
        // held until the second batch is being sent too; without parallel formations it never would be (the
        // fallback only ends the test, which then fails on `most`)
        await Promise.race([secondInFlight, new Promise((r) => setTimeout(r, 2_000))]);
      } else {
        secondSubmitting();
      }
      inFlight--;
      return submit(request);
    };
    const first = h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) });
    // the first batch is formed and being sent: the second item cannot join it
    await firstInFlight;
    await Promise.all([first, h.batcher.place({ settlementId: 'stl_2', chainId: CHAIN, item: item(2) })]);
    expect(most).toBe(2);
    expect(h.stored.map((b) => b.itemCount)).toEqual([1, 1]);
  });

  it("never puts two items of one (payer, nonce) in one batch: the second waits for the next (an EIP-3009 and a Permit2 nonce may be equal)", async () => {
    const h = harness();
    const other = '0x' + '66'.repeat(20);
    await Promise.all([
      h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) }),
      h.batcher.place({ settlementId: 'stl_2', chainId: CHAIN, item: item(1) }),
      h.batcher.place({ settlementId: 'stl_3', chainId: CHAIN, item: item(1, 250_000n, 65, other) }),
      h.batcher.place({ settlementId: 'stl_4', chainId: CHAIN, item: item(2) }),
    ]);
    expect(h.log).toEqual(['store bat_1 [stl_1,stl_3,stl_4]', 'send bat_1', 'store bat_2 [stl_2]', 'send bat_2']);
  });

  it('keeps each batch within the gas budget', async () => {
    const budget = BATCH_OVERHEAD_GAS + 2n * itemEnvelope(item(1));
    const h = harness({ gasBudget: () => budget });
    await Promise.all([1, 2, 3, 4, 5].map((n) => h.batcher.place({ settlementId: `stl_${n}`, chainId: CHAIN, item: item(n) })));
    expect(h.stored.map((b) => b.itemCount)).toEqual([2, 2, 1]);
    for (const b of h.stored) expect(b.gasCap).toBeLessThanOrEqual(budget);
  });

  it('answers a settlement placed by an earlier run with its stored batch, and never places it twice', async () => {
    const h = harness();
    const first = await h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) });
    const [again, other] = await Promise.all([
      h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) }),
      h.batcher.place({ settlementId: 'stl_2', chainId: CHAIN, item: item(2) }),
    ]);
    expect(again.id).toBe(first.id);
    expect(other.id).not.toBe(first.id);
    expect(h.stored.map((b) => b.itemCount)).toEqual([1, 1]);
  });

  it('places a settlement asked for twice at once (a job run twice) in one batch, once', async () => {
    const h = harness();
    const [a, b] = await Promise.all([
      h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) }),
      h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) }),
    ]);
    expect(a.id).toBe(b.id);
    expect(h.stored.map((s) => s.itemCount)).toEqual([1]);
  });

  it('stores nothing and fails the items when no relayer has gas', async () => {
    const h = harness({ nextRelayer: async () => undefined });
    await expect(h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) })).rejects.toBeInstanceOf(NoFundedRelayerError);
    expect(h.stored).toEqual([]);
    expect(h.submitted).toEqual([]);
  });

  it('hands out the stored batch even when sending it failed: each settlement sends it again (same key) on its own', async () => {
    const h = harness();
    h.options.transactions.submit = async () => {
      throw new Error('rpc down');
    };
    const batch = await h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) });
    expect(batch.id).toBe('bat_1');
    await expect(h.batcher.outcome(batch, 1)).rejects.toThrow('rpc down');
  });

  it('waits once per batch however many of its settlements ask', async () => {
    const h = harness();
    let waits = 0;
    h.transactions.waitForOutcome = async () => {
      waits++;
      return { status: 'confirmed', hash: '0xaa', blockNumber: 1, logs: [] };
    };
    const batch = await h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) });
    await Promise.all([h.batcher.outcome(batch, 1), h.batcher.outcome(batch, 1), h.batcher.outcome(batch, 1)]);
    expect(waits).toBe(1);
  });

  it("counts each item's calldata in its envelope and in the budget: a 4 KB signature is ~65k gas more", () => {
    expect(itemEnvelope(item(1, 250_000n, 4096)) - itemEnvelope(item(1))).toBe(itemCalldataGas(item(1, 250_000n, 4096)) - itemCalldataGas(item(1)));
    expect(itemEnvelope(item(1, 250_000n, 4096)) - itemEnvelope(item(1))).toBeGreaterThan(60_000n);
    expect(gasCapOf([item(1), item(2, 250_000n, 4096)])).toBe(BATCH_OVERHEAD_GAS + itemEnvelope(item(1)) + itemEnvelope(item(2, 250_000n, 4096)));
  });

  it("sends a contract-wallet payer's item in a transaction of its own, never with ordinary items", async () => {
    const h = harness();
    await Promise.all([
      h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) }),
      h.batcher.place({ settlementId: 'stl_w1', chainId: CHAIN, item: item(11, 400_000n, 4000), alone: true }),
      h.batcher.place({ settlementId: 'stl_2', chainId: CHAIN, item: item(2) }),
      h.batcher.place({ settlementId: 'stl_w2', chainId: CHAIN, item: item(12, 400_000n, 4000), alone: true }),
      h.batcher.place({ settlementId: 'stl_3', chainId: CHAIN, item: item(3) }),
    ]);
    expect(h.log.filter((l) => l.startsWith('store'))).toEqual(['store bat_1 [stl_1,stl_2,stl_3]', 'store bat_2 [stl_w1]', 'store bat_3 [stl_w2]']);
  });

  describe('estimated before it is stored', () => {
    /** an estimator that fails any transaction carrying one of these items' nonces */
    function failing(nonces: number[], how: 'revert' | 'cap' = 'revert'): ExecutorBatchesOptions['estimate'] {
      return async (_chainId, tx) => {
        const [items] = executorInterface.decodeFunctionData('settle', tx.data);
        const bad = items.some((i: { nonce: string }) => nonces.some((n) => BigInt(i.nonce) === BigInt(n)));
        if (!bad) return { gas: 100_000n };
        return how === 'revert' ? { revert: 'hostile' } : { gas: 100_000_000n };
      };
    }

    it('leaves out the items that fail alone (refused, nothing stored for them) and stores the rest together', async () => {
      const h = harness({ estimate: failing([2, 4]) });
      const results = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => h.batcher.place({ settlementId: `stl_${n}`, chainId: CHAIN, item: item(n) })));
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
      const refused = results[1] as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(ItemRefusedError);
      expect(refused.reason.reason).toBe('the settle transaction would revert: hostile');
      expect(h.log).toEqual(['store bat_1 [stl_1,stl_3,stl_5]', 'send bat_1']);
      expect([...h.placed.keys()].sort()).toEqual(['stl_1', 'stl_3', 'stl_5']);
    });

    it('does the same when the estimate is above the cap', async () => {
      const h = harness({ estimate: failing([1], 'cap') });
      const results = await Promise.allSettled([1, 2].map((n) => h.batcher.place({ settlementId: `stl_${n}`, chainId: CHAIN, item: item(n) })));
      expect((results[0] as PromiseRejectedResult).reason.reason).toBe('settle gas estimate is above its cap');
      expect(h.log).toEqual(['store bat_1 [stl_2]', 'send bat_1']);
    });

    it("is estimated within the batch's own gas cap: a payer's code that needs more runs out of it there, above its cap (issue 40, 4)", async () => {
      const caps: bigint[] = [];
      const h = harness({
        estimate: async (_chainId, tx, gasCap) => {
          caps.push(gasCap);
          const [items] = executorInterface.decodeFunctionData('settle', tx.data);
          return items.some((i: { nonce: string }) => BigInt(i.nonce) === 1n) ? { revert: 'out of gas', outOfGas: gasCap } : { gas: 100_000n };
        },
      });
      const results = await Promise.allSettled([1, 2].map((n) => h.batcher.place({ settlementId: `stl_${n}`, chainId: CHAIN, item: item(n) })));
      expect((results[0] as PromiseRejectedResult).reason.reason).toBe('settle gas estimate is above its cap');
      expect(h.log).toEqual(['store bat_1 [stl_2]', 'send bat_1']);
      expect(caps.every((cap) => cap > 0n)).toBe(true);
    });

    it('refuses a contract-wallet item alone whose estimate fails; an ordinary one alone is retried, not refused', async () => {
      const h = harness({ estimate: failing([1, 2]) });
      const wallet = h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1), alone: true });
      await expect(wallet).rejects.toBeInstanceOf(ItemRefusedError);
      const ordinary = h.batcher.place({ settlementId: 'stl_2', chainId: CHAIN, item: item(2) });
      await expect(ordinary).rejects.not.toBeInstanceOf(ItemRefusedError);
      expect(h.stored).toEqual([]);
    });

    it('refuses nobody when every item fails alone (the network, not an item): nothing is stored', async () => {
      const h = harness({ estimate: async () => ({ revert: 'NotTreasury()' }) });
      const results = await Promise.allSettled([1, 2].map((n) => h.batcher.place({ settlementId: `stl_${n}`, chainId: CHAIN, item: item(n) })));
      for (const r of results) expect((r as PromiseRejectedResult).reason).not.toBeInstanceOf(ItemRefusedError);
      expect(h.stored).toEqual([]);
    });
  });

  describe('a batch read back from the database (issue 40: a database writer can store any row)', () => {
    const erc20 = new Interface(['function transferFrom(address from, address to, uint256 value)']);
    /** A batch row as another process (or a database writer) stored it: not formed by this batcher. */
    function storedRow(h: ReturnType<typeof harness>, fields: Partial<StoredSettlementBatch> = {}, items = [item(1)]): StoredSettlementBatch {
      const row = { id: 'bat_stored', chainId: CHAIN, relayer: RELAYER, to: TREASURY, data: settleCalldata(items), gasCap: 30_000_000n, itemCount: items.length, ...fields };
      h.members.set(row.id, items.map((_, i) => `stl_${i + 1}`));
      return row;
    }

    it('sends one that is exactly what this worker forms, with the gas its items give, not the row\'s', async () => {
      const h = harness();
      await h.batcher.outcome(storedRow(h), 1);
      expect(h.submitted).toHaveLength(1);
      expect(h.submitted[0]).toMatchObject({ from: RELAYER, to: TREASURY, gasCap: gasCapOf([item(1)]), gasLimit: gasCapOf([item(1)]) });
    });

    it.each([
      ['a target other than the treasury', { to: '0x' + '66'.repeat(20) }, 'is not the treasury'],
      ['the treasury as its sender', { relayer: TREASURY }, "is not one of the executor's relayers"],
      ['a sender that is no relayer', { relayer: '0x' + '77'.repeat(20) }, "is not one of the executor's relayers"],
      ['calldata that is no settle call', { data: erc20.encodeFunctionData('transferFrom', [RELAYER, RELAYER, 1n]) }, 'is not a settle call'],
      ['trailing bytes after its items', { data: settleCalldata([item(1)]) + 'ab' }, 'is not the encoding of its items'],
      ['more items than settlements', { data: settleCalldata([item(1), item(2)]) }, 'holds 2 items for 1 settlements'],
    ])('refuses %s: nothing is signed', async (_what, fields, reason) => {
      const h = harness();
      const error = await h.batcher.outcome(storedRow(h, fields), 1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StoredBatchRefusedError);
      expect((error as Error).message).toContain(reason);
      expect(h.submitted).toEqual([]);
    });

    it('refuses an item that is not the one this worker builds for its settlement', async () => {
      const h = harness({ itemProblem: async (id) => (id === 'stl_2' ? "its call is not settlement stl_2's payment" : undefined) });
      const error = await h.batcher.outcome(storedRow(h, {}, [item(1), item(2)]), 1).catch((e: unknown) => e);
      expect((error as Error).message).toContain("item 1: its call is not settlement stl_2's payment");
      expect(h.submitted).toEqual([]);
    });

    it('checks nothing again for a batch this process formed from its own items', async () => {
      const itemProblem = jest.fn(async () => 'never asked');
      const h = harness({ itemProblem });
      const batch = await h.batcher.place({ settlementId: 'stl_1', chainId: CHAIN, item: item(1) });
      await h.batcher.outcome(batch, 1);
      expect(itemProblem).not.toHaveBeenCalled();
      expect(h.submitted.every((r) => r.settlementId === batch.id)).toBe(true);
    });
  });
});
