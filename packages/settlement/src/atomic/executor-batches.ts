import type { SubmittedTransaction, TransactionOutcome, TransactionProvider } from '@facilitator/chain';
import type { SettlementBatchRepository, StoredSettlementBatch } from '@facilitator/db';
import { settleCalldata, type ExecutorItem } from '@facilitator/settlement-contract';
import type { AtomicItemRequest, AtomicSettlement } from './atomic-settlement';

export interface ExecutorBatchesOptions {
  batches: Pick<SettlementBatchRepository, 'create' | 'ofSettlement' | 'alreadyBatched'>;
  transactions: Pick<TransactionProvider, 'submit' | 'find' | 'waitForOutcome'>;
  /** lowercase; the executor runs at the treasury's address */
  treasury: string;
  /** the relayer that sends the next batch of a chain; undefined when none has gas */
  nextRelayer(chainId: number): Promise<string | undefined>;
  /** BATCH_GAS_BUDGET_<chainId>: items are added while the sum of their gas stays within it */
  gasBudget(chainId: number): bigint;
  /** how long the first ready item waits for others before its batch is formed (BATCH_WINDOW_MS; default 0) */
  windowMs?: number;
  /**
   * batches of one chain formed and sent at once (default 1): with several relayers, one batch's estimate
   * and broadcast need not wait for the previous one's
   */
  parallel?: number;
}

/** Gas of the `settle` transaction around its items: the base cost, the call and the loop's start. */
export const BATCH_OVERHEAD_GAS = 60_000n;
/** Per item, besides the gas it is given: its calldata (16 gas a byte), the ABI copy, the self-call and the event. */
export const ITEM_OVERHEAD_GAS = 25_000n;

/**
 * What an item may cost the transaction: its own gas, plus the 1/64 the EVM keeps back from a call for the
 * caller, plus its overhead. The transaction is signed with the sum, so every item can use all of its gas
 * (a contract wallet that burns more when mined than when estimated) without starving the ones after it.
 */
export function itemEnvelope(item: ExecutorItem): bigint {
  return (item.gas * 64n + 62n) / 63n + ITEM_OVERHEAD_GAS;
}

/** Thrown to the items of a batch that could not be formed because no relayer has gas; their steps wait. */
export class NoFundedRelayerError extends Error {}

interface Waiting {
  request: AtomicItemRequest;
  resolve(batch: StoredSettlementBatch): void;
  reject(error: unknown): void;
}

/**
 * Group commit: while one batch of a chain is being stored and sent, the settlements that become ready
 * join the next one, so under load they share transactions and when idle each goes alone at once.
 * Nothing is sent before its batch and items are stored; a crash leaves a stored batch that the next
 * run of any of its settlements sends with the same idempotency key (batch id, "settle").
 */
export class ExecutorBatches implements AtomicSettlement {
  private readonly waiting = new Map<number, Waiting[]>();
  // formations running per chain (at most `parallel`)
  private readonly forming = new Map<number, number>();
  private readonly placing = new Map<string, Promise<StoredSettlementBatch>>();
  // one wait per batch in this process, however many of its settlements ask
  private readonly outcomes = new Map<string, Promise<TransactionOutcome>>();

  constructor(private readonly options: ExecutorBatchesOptions) {}

  batchOf(settlementId: string): Promise<StoredSettlementBatch | null> {
    return this.options.batches.ofSettlement(settlementId);
  }

  place(request: AtomicItemRequest): Promise<StoredSettlementBatch> {
    // one entry per settlement: a second run of the same job (a stalled lock) waits for the same batch
    const already = this.placing.get(request.settlementId);
    if (already) return already;
    const placing = new Promise<StoredSettlementBatch>((resolve, reject) => {
      const queue = this.waiting.get(request.chainId) ?? [];
      queue.push({ request, resolve, reject });
      this.waiting.set(request.chainId, queue);
      this.startForming(request.chainId, this.options.windowMs ?? 0);
    });
    this.placing.set(request.settlementId, placing);
    const forget = () => this.placing.delete(request.settlementId);
    placing.then(forget, forget);
    return placing;
  }

  outcome(batch: StoredSettlementBatch, confirmations: number): Promise<TransactionOutcome> {
    let pending = this.outcomes.get(batch.id);
    if (!pending) {
      pending = this.send(batch).then((tx) => this.options.transactions.waitForOutcome(tx.id, confirmations));
      this.outcomes.set(batch.id, pending);
      // kept a little after it ends, for the batch's other settlements; a failure is not kept
      const forget = () => setTimeout(() => this.outcomes.delete(batch.id), 10_000).unref();
      pending.then(forget, () => this.outcomes.delete(batch.id));
    }
    return pending;
  }

  /** The batch's transaction: the one already signed for its key, else sent now (idempotent per key). */
  private async send(batch: StoredSettlementBatch): Promise<SubmittedTransaction> {
    const sent = await this.options.transactions.find(batch.id, 'settle');
    if (sent) return sent;
    return this.options.transactions.submit({
      settlementId: batch.id,
      purpose: 'settle',
      chainId: batch.chainId,
      from: batch.relayer,
      to: batch.to,
      data: batch.data,
      gasCap: batch.gasCap,
      gasLimit: batch.gasCap,
    });
  }

  /** Starts a formation on this chain unless `parallel` are running already (they take what waits). */
  private startForming(chainId: number, delayMs: number): void {
    const running = this.forming.get(chainId) ?? 0;
    if (running >= Math.max(1, this.options.parallel ?? 1)) return;
    this.forming.set(chainId, running + 1);
    const form = () => void this.formBatches(chainId);
    if (delayMs > 0) setTimeout(form, delayMs);
    else setImmediate(form);
  }

  private async formBatches(chainId: number): Promise<void> {
    try {
      for (;;) {
        const queue = this.waiting.get(chainId) ?? [];
        if (queue.length === 0) return;
        const taken = this.takeWithinBudget(queue, this.options.gasBudget(chainId));
        this.waiting.set(chainId, queue.slice(taken.length));
        await this.formOne(chainId, taken);
      }
    } finally {
      this.forming.set(chainId, (this.forming.get(chainId) ?? 1) - 1);
      // an item that arrived after the last look starts the next round
      if ((this.waiting.get(chainId)?.length ?? 0) > 0) this.startForming(chainId, 0);
    }
  }

  private takeWithinBudget(queue: Waiting[], budget: bigint): Waiting[] {
    const taken: Waiting[] = [];
    let gas = BATCH_OVERHEAD_GAS;
    for (const entry of queue) {
      const envelope = itemEnvelope(entry.request.item);
      if (taken.length > 0 && gas + envelope > budget) break;
      taken.push(entry);
      gas += envelope;
    }
    return taken;
  }

  /** Stores one batch of these items, then sends it; each item's promise learns its batch (or the error). */
  private async formOne(chainId: number, entries: Waiting[], attempt = 1): Promise<void> {
    try {
      // the steps ask for a stored batch before placing, so only a concurrent run can have placed one of
      // these: the batch's primary key says so (create returns null), and only then are they looked up
      const fresh = attempt === 1 ? entries : await this.withoutPlaced(entries);
      if (fresh.length === 0) return;
      const relayer = await this.options.nextRelayer(chainId);
      if (!relayer) throw new NoFundedRelayerError(`no relayer on chain ${chainId} has gas for a settle transaction`);
      const items = fresh.map((e) => e.request.item);
      const batch = await this.options.batches.create({
        chainId,
        relayer: relayer.toLowerCase(),
        to: this.options.treasury,
        data: settleCalldata(items),
        gasCap: items.reduce((sum, item) => sum + itemEnvelope(item), BATCH_OVERHEAD_GAS),
        settlementIds: fresh.map((e) => e.request.settlementId),
      });
      // null: a concurrent run placed one of them meanwhile; the second attempt sees which (once: then it is a bug)
      if (!batch) {
        if (attempt >= 2) throw new Error(`could not store a batch of ${fresh.length} settlements on chain ${chainId}`);
        return this.formOne(chainId, fresh, attempt + 1);
      }
      // sent before the items hear of it: meanwhile the next items gather. A failure here is not theirs to
      // see twice: each item's outcome() sends again (same key) and meets it there, with its job's retries.
      await this.send(batch).catch(() => undefined);
      for (const entry of fresh) entry.resolve(batch);
    } catch (error) {
      for (const entry of entries) entry.reject(error);
    }
  }

  /** Entries whose settlement is not in a batch yet; the others learn the batch an earlier run placed them in. */
  private async withoutPlaced(entries: Waiting[]): Promise<Waiting[]> {
    const placed = await this.options.batches.alreadyBatched(entries.map((e) => e.request.settlementId));
    if (placed.size === 0) return entries;
    for (const entry of entries.filter((e) => placed.has(e.request.settlementId))) {
      const batch = await this.options.batches.ofSettlement(entry.request.settlementId);
      if (batch) entry.resolve(batch);
      else entry.reject(new Error(`settlement ${entry.request.settlementId} is batched but its batch is missing`));
    }
    return entries.filter((e) => !placed.has(e.request.settlementId));
  }
}
