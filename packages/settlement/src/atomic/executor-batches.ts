import type { SubmittedTransaction, TransactionOutcome, TransactionProvider } from '@facilitator/evm-sending';
import type { OutcomeWaits, PendingOutcome } from '../outcome-waits';
import type { BatchNotStored, SettlementBatchRepository, StoredSettlementBatch } from '@facilitator/db';
import { SettlementEndedError } from '../settlement-ended';
import { executorInterface, itemCalldataGas, itemKey, settleCalldata, type ExecutorItem } from '@facilitator/evm-executor';
import type { AtomicItemRequest, AtomicSettlement } from './atomic-settlement';

export interface ExecutorBatchesOptions {
  batches: Pick<SettlementBatchRepository, 'create' | 'ofSettlement' | 'alreadyBatched' | 'settlementsOf'>;
  transactions: Pick<TransactionProvider, 'submit' | 'find'>;
  /** the process's one wait for transactions' outcomes (shared with the machine's steps), outside the job slots */
  outcomes: Pick<OutcomeWaits, 'within'>;
  /** lowercase; the executor runs at the treasury's address */
  treasury: string;
  /** the relayer that sends the next batch of a chain; undefined when none has gas */
  nextRelayer(chainId: number): Promise<string | undefined>;
  /** whether the address is one of the executor's relayers on the chain (the treasury never is: it signs no batch) */
  isRelayer(chainId: number, address: string): boolean;
  /**
   * Why an item read back from a stored batch is not the one this worker builds for that settlement (see
   * storedItemCheck); undefined when it is. A stored batch is sent only when every item passes.
   */
  itemProblem(settlementId: string, chainId: number, item: ExecutorItem): Promise<string | undefined>;
  /** BATCH_GAS_BUDGET_<chainId>: items are added while the sum of their gas stays within it */
  gasBudget(chainId: number): bigint;
  /** how long the first ready item waits for others before its batch is formed (BATCH_WINDOW_MS; default 0) */
  windowMs?: number;
  /**
   * batches of one chain formed and sent at once (default 1): with several relayers, one batch's estimate
   * and broadcast need not wait for the previous one's
   */
  parallel?: number;
  /**
   * Estimates a transaction against the pending block: its gas, or why it would revert. Each batch is
   * estimated before it is stored, so items that would fail it are left out (and refused) instead of
   * being stored in a batch nobody can send. Absent: batches are stored unchecked (the send still estimates).
   */
  estimate?(chainId: number, tx: { from: string; to: string; data: string }, gasCap: bigint): Promise<{ gas: bigint } | { revert: string; outOfGas?: bigint }>;
}

/** Gas of the `settle` transaction around its items: the base cost, the call and the loop's start. */
export const BATCH_OVERHEAD_GAS = 60_000n;
/** Per item, besides the gas it is given and its calldata: the ABI copy, the self-call, memory and the event. */
const ITEM_OVERHEAD_GAS = 20_000n;

/**
 * What an item may cost the transaction: its own gas, plus the 1/64 the EVM keeps back from a call for the
 * caller, plus its overhead, plus its calldata (16 gas a non-zero byte, 4 a zero byte: a contract wallet's
 * signature of kilobytes costs tens of thousands of gas before anything runs). The transaction is signed
 * with the sum, so every item can use all of its gas (a contract wallet that burns more when mined than
 * when estimated) without starving the ones after it, and no item's calldata eats another's gas.
 */
export function itemEnvelope(item: ExecutorItem): bigint {
  return (item.gas * 64n + 62n) / 63n + ITEM_OVERHEAD_GAS + itemCalldataGas(item);
}

/** Thrown to an item left out of its batch because the batch's estimate fails with it and passes without it. */
export class ItemRefusedError extends Error {
  constructor(
    readonly reason: string,
    readonly details: Record<string, unknown>,
  ) {
    super(`settle item refused: ${reason}`);
    this.name = 'ItemRefusedError';
  }
}

/** The gas a batch of these items is signed with, and the cap its estimate must stay within. */
export function gasCapOf(items: readonly ExecutorItem[]): bigint {
  return items.reduce((sum, item) => sum + itemEnvelope(item), BATCH_OVERHEAD_GAS);
}

/**
 * Thrown when a stored batch is not what this worker would have formed (its sender, target, calldata or
 * items): a row a database writer stored, which no key signs. Nothing was sent; its settlements are parked.
 */
export class StoredBatchRefusedError extends Error {
  constructor(
    readonly batchId: string,
    readonly reason: string,
  ) {
    super(`stored batch ${batchId} refused, nothing signed: ${reason}`);
    this.name = 'StoredBatchRefusedError';
  }
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
  // one send per batch in this process, however many of its settlements ask
  private readonly sends = new Map<string, Promise<SubmittedTransaction>>();
  // the batches this process formed from items it built: the others are read back and checked before sending
  private readonly formedHere = new WeakSet<StoredSettlementBatch>();

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

  async outcome(batch: StoredSettlementBatch, confirmations: number): Promise<TransactionOutcome | PendingOutcome> {
    let sending = this.sends.get(batch.id);
    if (!sending) {
      sending = this.send(batch);
      this.sends.set(batch.id, sending);
      // kept a little after it is sent, for the batch's other settlements; a failure is not kept
      const forget = () => setTimeout(() => this.sends.delete(batch.id), 10_000).unref();
      sending.then(forget, () => this.sends.delete(batch.id));
    }
    return this.options.outcomes.within((await sending).id, confirmations);
  }

  /**
   * The batch's transaction: the one already signed for its key, else sent now (idempotent per key). A batch
   * read back from the database (a crash, another process) is first checked against what this worker derives.
   */
  private async send(batch: StoredSettlementBatch): Promise<SubmittedTransaction> {
    const sent = await this.options.transactions.find(batch.id, 'settle');
    if (sent) return sent;
    const gasCap = this.formedHere.has(batch) ? batch.gasCap : await this.checkedGasCap(batch);
    return this.options.transactions.submit({
      settlementId: batch.id,
      purpose: 'settle',
      chainId: batch.chainId,
      from: batch.relayer,
      to: batch.to,
      data: batch.data,
      gasCap,
      gasLimit: gasCap,
    });
  }

  /**
   * A stored batch is signed only as this worker would have formed it: sent by one of the executor's relayers
   * to the treasury, its calldata exactly `settle` of the items this worker builds for its own settlements, in
   * their stored order, and signed with the gas those items' envelopes give (never the row's). Anything else
   * is a row someone else wrote (issue 40: a database writer's batch moved a merchant's allowance): refused.
   * Costs one statement and one settlement read per item, only for batches this process did not form.
   */
  private async checkedGasCap(batch: StoredSettlementBatch): Promise<bigint> {
    const refuse = (reason: string) => new StoredBatchRefusedError(batch.id, reason);
    if (batch.to.toLowerCase() !== this.options.treasury.toLowerCase()) throw refuse(`its target ${batch.to} is not the treasury`);
    const relayer = batch.relayer.toLowerCase();
    if (relayer === this.options.treasury.toLowerCase() || !this.options.isRelayer(batch.chainId, relayer)) {
      throw refuse(`its sender ${batch.relayer} is not one of the executor's relayers`);
    }
    let items: ExecutorItem[];
    try {
      const [tuples] = executorInterface.decodeFunctionData('settle', batch.data) as unknown as [Array<[string, string, bigint, string, string, string, bigint]>];
      items = tuples.map(([payer, merchant, amount, nonce, target, data, gas]) => ({ payer, merchant, amount, nonce, target, data, gas }));
    } catch {
      throw refuse('its calldata is not a settle call');
    }
    // decoding tolerates trailing bytes and other encodings: only the exact encoding of the items is signed
    if (settleCalldata(items) !== batch.data.toLowerCase()) throw refuse('its calldata is not the encoding of its items');
    const settlementIds = await this.options.batches.settlementsOf(batch.id);
    if (items.length === 0 || items.length !== settlementIds.length) throw refuse(`it holds ${items.length} items for ${settlementIds.length} settlements`);
    for (const [i, item] of items.entries()) {
      const problem = await this.options.itemProblem(settlementIds[i], batch.chainId, item);
      if (problem) throw refuse(`item ${i}: ${problem}`);
    }
    return gasCapOf(items);
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
        this.waiting.set(chainId, queue.filter((entry) => !taken.includes(entry)));
        await this.formOne(chainId, taken);
      }
    } finally {
      this.forming.set(chainId, (this.forming.get(chainId) ?? 1) - 1);
      // an item that arrived after the last look starts the next round
      if ((this.waiting.get(chainId)?.length ?? 0) > 0) this.startForming(chainId, 0);
    }
  }

  /**
   * The next batch: the first item waiting, and after it whatever fits the budget. An item whose payer has
   * code (a contract wallet, ERC-1271 or ERC-6492) goes alone: its wallet runs code of a stranger's choosing
   * and its signature may be kilobytes, so a hostile one can only ever sink its own transaction. An item
   * whose (payer, nonce) is already taken waits for the next batch: an item's outcome is read by that key, and
   * a payer may sign an EIP-3009 and a Permit2 payment with the same nonce (two nonce spaces), so within one
   * batch one item's outcome would otherwise be read as the other's.
   */
  private takeWithinBudget(queue: Waiting[], budget: bigint): Waiting[] {
    if (queue[0].request.alone) return [queue[0]];
    const taken: Waiting[] = [];
    const keys = new Set<string>();
    let gas = BATCH_OVERHEAD_GAS;
    for (const entry of queue) {
      if (entry.request.alone) continue;
      const key = itemKey(entry.request.item.payer, entry.request.item.nonce);
      if (keys.has(key)) continue;
      const envelope = itemEnvelope(entry.request.item);
      if (taken.length > 0 && gas + envelope > budget) break;
      taken.push(entry);
      keys.add(key);
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
      for (const group of await this.sendable(chainId, relayer.toLowerCase(), fresh)) {
        const items = group.map((e) => e.request.item);
        const batch = await this.options.batches.create({
          chainId,
          relayer: relayer.toLowerCase(),
          to: this.options.treasury,
          data: settleCalldata(items),
          gasCap: gasCapOf(items),
          settlementIds: group.map((e) => e.request.settlementId),
        });
        if ('stored' in batch) {
          await this.notStored(chainId, group, batch, attempt);
          continue;
        }
        this.formedHere.add(batch);
        // sent before the items hear of it: meanwhile the next items gather. A failure here is not theirs to
        // see twice: each item's outcome() sends again (same key) and meets it there, with its job's retries.
        await this.send(batch).catch(() => undefined);
        for (const entry of group) entry.resolve(batch);
      }
    } catch (error) {
      // an entry already answered (resolved, or refused) ignores this
      for (const entry of entries) entry.reject(error);
    }
  }

  /**
   * A batch that was not stored (nothing of it was): its settlements that ended meanwhile (a settle request
   * stopped them before anything was sent) learn it and the others are formed again; or a concurrent run
   * placed one of them, and the second attempt sees which (once: then it is a bug).
   */
  private async notStored(chainId: number, group: Waiting[], batch: BatchNotStored, attempt: number): Promise<void> {
    if (batch.ended.length > 0) {
      const ended = new Set(batch.ended);
      for (const entry of group.filter((e) => ended.has(e.request.settlementId))) entry.reject(new SettlementEndedError(entry.request.settlementId));
      const rest = group.filter((e) => !ended.has(e.request.settlementId));
      if (rest.length > 0) await this.formOne(chainId, rest, attempt);
      return;
    }
    if (attempt >= 2) throw new Error(`could not store a batch of ${group.length} settlements on chain ${chainId}`);
    await this.formOne(chainId, group, attempt + 1);
  }

  /**
   * The batches these items can be stored in: all together when their transaction's estimate passes
   * within its cap. Otherwise each is estimated alone; the ones that fail alone are refused (nothing was
   * stored or sent for them, so their settlements end released, nobody charged) and the rest are formed
   * again (each alone if together they still fail). When every item passes alone, or every item fails
   * alone in a batch of several, the batch is the problem, not an item: nothing is refused.
   */
  private async sendable(chainId: number, relayer: string, entries: Waiting[]): Promise<Waiting[][]> {
    if (!this.options.estimate) return [entries];
    const whole = await this.estimateOf(chainId, relayer, entries);
    if (whole === undefined) return [entries];
    if (entries.length === 1) {
      // alone, a contract-wallet item is the only possible cause; an ordinary item's batch fails for the network's reasons
      if (entries[0].request.alone) entries[0].reject(new ItemRefusedError(whole.reason, whole.details));
      else entries[0].reject(new Error(`the settle transaction would fail: ${whole.reason}`));
      return [];
    }
    const alone = await Promise.all(entries.map((entry) => this.estimateOf(chainId, relayer, [entry])));
    const passing = entries.filter((_, i) => alone[i] === undefined);
    if (passing.length === 0) {
      for (const entry of entries) entry.reject(new Error(`the settle transaction would fail: ${whole.reason}`));
      return [];
    }
    entries.forEach((entry, i) => {
      const failure = alone[i];
      if (failure) entry.reject(new ItemRefusedError(failure.reason, { ...failure.details, batch_estimate: whole.reason }));
    });
    if (passing.length === entries.length) return passing.map((entry) => [entry]);
    return (await this.estimateOf(chainId, relayer, passing)) === undefined ? [passing] : passing.map((entry) => [entry]);
  }

  /** Why these items' settle transaction cannot be sent (a revert, or an estimate above its cap); undefined when it can. */
  private async estimateOf(chainId: number, relayer: string, entries: Waiting[]): Promise<{ reason: string; details: Record<string, unknown> } | undefined> {
    const items = entries.map((e) => e.request.item);
    const cap = gasCapOf(items);
    // the items run payers' code: estimated as the batch is sent, within its gas (and, by the caller, at the market's price)
    const estimate = await this.options.estimate!(chainId, { from: relayer, to: this.options.treasury, data: settleCalldata(items) }, cap);
    const above = (gas: string) => ({ reason: 'settle gas estimate is above its cap', details: { simulation: 'settle', gas_estimate: gas, gas_cap: cap.toString() } });
    if ('revert' in estimate && estimate.outOfGas !== undefined) return above(`above ${estimate.outOfGas}`);
    if ('revert' in estimate) return { reason: `the settle transaction would revert: ${estimate.revert}`, details: { simulation: 'settle' } };
    if (estimate.gas > cap) return above(estimate.gas.toString());
    return undefined;
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
