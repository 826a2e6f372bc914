import type { AwaitingFinality, ChainTransactionRepository, ForeignExecutionWatch, SettlementBatchRepository, SettlementFinalityStore } from '@facilitator/db';
import type { Logger } from '@facilitator/logging';
import { evmExecutionOf, withOurExecutor, type Execution, type MechanismChain } from '@facilitator/payment-mechanisms';
import { itemKey, itemOutcomes } from '@facilitator/evm-executor';
import type { WebhookOutbox } from '@facilitator/webhooks';
import { paymentOf } from './payment';
import { reorgEvent, type ReorgChange, type SettlementMoney } from './settlement-events';
import type { SettlementWithVerification } from './step';

type Outcome = 'watching' | 'final' | 'reorged' | 'changed';

/** The purpose a reorg note and event give a transaction someone else sent that settled a settlement of ours. */
const FOREIGN_EXECUTION = 'foreign_execution';

/** What the watcher reads of a chain and sends to it. */
export interface FinalityChain {
  head(chainId: number): Promise<number>;
  /** the hash of the chain's block at this height now (null past the head: of a lagging endpoint too) */
  blockHash(chainId: number, blockNumber: number): Promise<string | null>;
  /** the receipt of a mined transaction, or null when no block of the chain holds it */
  receipt(chainId: number, hash: string): Promise<FinalityReceipt | null>;
  /**
   * what a payment's mechanism reads to find who executed it (findExecution): EIP-3009's AuthorizationUsed,
   * Permit2's transfer through x402's proxy, whichever the settlement's payment is
   */
  mechanismChain(chainId: number): MechanismChain;
  /**
   * sends a signed transaction (of this hash) again: `nonce_taken` when another transaction of its key holds
   * the nonce now, as seen by an endpoint that has itself reached the block using it (a lagging endpoint
   * that does not know the receipt yet must not make it `nonce_taken`)
   */
  rebroadcast(chainId: number, rawTransaction: string, hash: string): Promise<'sent' | 'nonce_taken'>;
}

export interface FinalityReceipt {
  blockNumber: number;
  blockHash: string;
  status: 'confirmed' | 'reverted';
  /** read for an executor batch: each item's outcome is in them */
  logs: ReadonlyArray<{ address: string; topics: readonly string[]; data: string }>;
}

interface FinalityWatcherOptions {
  transactions: Pick<ChainTransactionRepository, 'findAwaitingFinality' | 'markFinal' | 'markReorged' | 'markReincluded' | 'markLost'>;
  settlements: Pick<
    SettlementFinalityStore,
    'recordFinality' | 'markFinalWhereSettled' | 'findWithVerification' | 'foreignExecutionsAwaitingFinality' | 'markForeignExecutionFinal' | 'moveForeignExecution'
  >;
  /** the settlements of an executor batch: a `settle` transaction's reorg is each of theirs */
  batches?: Pick<SettlementBatchRepository, 'settlementsOf'>;
  /** enqueues a settlement.reorged event once its row is stored */
  outbox: Pick<WebhookOutbox, 'enqueue' | 'row'>;
  chain: FinalityChain;
  /** the treasury, whose executor runs `settle` batches: its logs say what each item did */
  treasury: string;
  /** FINALITY_DEPTH_<chainId> of each enabled network */
  depths: ReadonlyMap<number, number>;
  logger: Logger;
  /** rows per network per run */
  batch?: number;
}

interface FinalityRun {
  watched: number;
  final: number;
  reorged: number;
  changed: number;
}

/**
 * After a settlement ends, its mined transactions are watched until their block is FINALITY_DEPTH deep.
 * One that a reorg removed is sent again as it was signed (its nonce is free again, and the signed
 * transaction is stored); the settlement's history records the reorg and the re-inclusion. When the
 * chain's outcome then differs from what was reported (the transfer now reverts, or its nonce went to
 * another transaction), the settlement's finality becomes `changed` and a settlement.reorged event tells
 * the merchant. Run as a maintenance job, once across the cluster; every step is safe to run again.
 *
 * A lagging RPC endpoint must not look like a reorg: a block it does not have yet (no hash at that height,
 * or a head below it) is waited for, never taken as removed. Only a block hash that differs at a height the
 * endpoint has reached counts, and only once the next run sees it too (and likewise a nonce taken by another
 * transaction): a reorg is acted on one poll later, a false one is never acted on.
 */
export class FinalityWatcher {
  /** row id -> what the last run suspected of it; acted on only when this run sees the same */
  private readonly suspects = new Map<string, 'reorg' | 'lost'>();
  /** row id -> the block a reorg removed it from, for a loss confirmed on a later run (best effort, in memory) */
  private readonly removedFrom = new Map<string, number>();

  constructor(private readonly options: FinalityWatcherOptions) {}

  async run(): Promise<FinalityRun> {
    const total: FinalityRun = { watched: 0, final: 0, reorged: 0, changed: 0 };
    for (const [chainId, depth] of this.options.depths) {
      const rows = await this.options.transactions.findAwaitingFinality(chainId, this.options.batch ?? 500);
      // the transactions someone else sent that settled a settlement of ours: watched as ours are
      const foreign = await this.options.settlements.foreignExecutionsAwaitingFinality(chainId, this.options.batch ?? 500);
      if (rows.length === 0 && foreign.length === 0) continue;
      const head = await this.options.chain.head(chainId);
      // one block read per height, not a receipt per transaction: only the transactions whose block is no
      // longer the one they were mined in (or that are out of the chain) need their receipt read
      const heights = [...new Set([...rows.flatMap((r) => (r.blockNumber === null ? [] : [r.blockNumber])), ...foreign.map((f) => f.blockNumber)])];
      const hashes = new Map(await Promise.all(heights.map(async (n) => [n, await this.options.chain.blockHash(chainId, n)] as const)));
      for (const row of foreign) {
        total.watched++;
        try {
          const outcome = await this.watchForeign(chainId, depth, head, row, hashes.get(row.blockNumber));
          if (outcome !== 'watching') total[outcome]++;
        } catch (err) {
          this.options.logger.warn('reorg watching: a payment executed by another transaction could not be checked', { settlementId: row.settlementId, err });
        }
      }
      for (const row of rows) {
        total.watched++;
        try {
          const outcome = await this.watch(chainId, depth, head, row, row.blockNumber === null ? undefined : hashes.get(row.blockNumber));
          if (outcome !== 'watching') total[outcome]++;
        } catch (err) {
          // one row's failed read (an endpoint's range cap, a rate limit) must not hold back the others; it is tried next run
          this.options.logger.warn('reorg watching: a transaction could not be checked', { transactionId: row.id, err });
        }
      }
    }
    // ended settlements with nothing left to watch (their transactions final, or none ever mined)
    await this.options.settlements.markFinalWhereSettled();
    if (total.reorged + total.changed > 0) this.options.logger.warn('reorg watching', { ...total });
    return total;
  }

  /** `seen`: the chain's hash at the row's height now (null: the endpoint has no block there yet) */
  private async watch(chainId: number, depth: number, head: number, row: AwaitingFinality, seen: string | null | undefined): Promise<Outcome> {
    if (row.blockNumber === null) return this.check(chainId, depth, head, row);
    // the endpoint that answered has not reached the block yet (it lags): nothing is known, wait for it
    if (seen === null || seen === undefined || row.blockNumber > head) return 'watching';
    if (seen === row.blockHash) {
      this.suspects.delete(row.id);
      return this.deepEnough(depth, head, row.blockNumber, row);
    }
    if (!this.confirmed(row.id, 'reorg')) return 'watching';
    return this.check(chainId, depth, head, row);
  }

  /** Whether the previous run suspected the same of this row; otherwise it is suspected now, for the next run. */
  private confirmed(rowId: string, suspicion: 'reorg' | 'lost'): boolean {
    if (this.suspects.get(rowId) === suspicion) {
      this.suspects.delete(rowId);
      return true;
    }
    this.suspects.set(rowId, suspicion);
    return false;
  }

  private async check(chainId: number, depth: number, head: number, row: AwaitingFinality): Promise<'watching' | 'final' | 'reorged' | 'changed'> {
    const { chain, transactions } = this.options;
    const receipt = await chain.receipt(chainId, row.minedHash);
    if (!receipt) {
      const firstSeen = await transactions.markReorged(row.id);
      if (firstSeen && row.blockNumber !== null) this.removedFrom.set(row.id, row.blockNumber);
      if (firstSeen) {
        for (const settlementId of await this.settlementsOf(row)) {
          await this.options.settlements.recordFinality(settlementId, {
            finality: 'reorged',
            reorg: true,
            note: { reorg: { purpose: row.purpose, tx_hash: row.minedHash, removed_from_block: row.blockNumber, action: 'broadcast again' } },
          });
        }
      }
      if ((await chain.rebroadcast(chainId, row.rawTransaction, row.minedHash)) === 'nonce_taken' && this.confirmed(row.id, 'lost')) {
        // the merchants are told before the row stops being watched: a crash in between tells them twice, never not at all
        const lostRow = { ...row, blockNumber: row.blockNumber ?? this.removedFrom.get(row.id) ?? null };
        const judged = await this.judge(chainId, lostRow, null, await this.settlementsOf(row));
        if (judged === 'unfinished') return 'watching';
        await this.tell(lostRow, judged);
        await transactions.markLost(row.id);
        this.removedFrom.delete(row.id);
        return 'changed';
      }
      return firstSeen ? 'reorged' : 'watching';
    }
    this.suspects.delete(row.id);
    this.removedFrom.delete(row.id);
    if (row.blockNumber !== receipt.blockNumber || row.blockHash !== receipt.blockHash) {
      // every chain fact is read before anything is written, and the merchants are told before the
      // re-inclusion is stored (which ends this branch): a failure in between judges again, a read error tells nobody
      const settlementIds = await this.settlementsOf(row);
      const judged = await this.judge(chainId, row, receipt, settlementIds);
      if (judged === 'unfinished') return 'watching';
      await this.tell(row, judged);
      const changedIds = new Set(judged.map((c) => c.settlementId));
      if (row.blockNumber === null) {
        for (const settlementId of settlementIds) {
          if (changedIds.has(settlementId)) continue;
          await this.options.settlements.recordFinality(settlementId, {
            finality: 'reorged',
            note: { reincluded: { purpose: row.purpose, tx_hash: row.minedHash, block: receipt.blockNumber, outcome: receipt.status } },
          });
        }
      }
      await transactions.markReincluded(row.id, receipt);
      if (changedIds.size > 0) return 'changed';
    }
    return this.deepEnough(depth, head, receipt.blockNumber, row);
  }

  /**
   * A settlement settled by a transaction that is not its own (docs/decisions.md, "Paid by another transaction"),
   * watched by its block as ours are, a suspected reorg acted on one run later. Once its block is gone, the
   * payment's mechanism is asked who executes it now (findExecution): found paying the merchant (the same
   * transaction mined again, or another), it is watched there; found nowhere on two runs in a row, the merchant
   * is told its payment is not paid (`changed`, settlement.reorged, merchant_paid false). We do not send the
   * payment again ourselves: the settlement is final, and the transaction that left usually returns to its
   * sender's pool, so a transfer of ours would race it (decided in docs/decisions.md).
   */
  private async watchForeign(chainId: number, depth: number, head: number, row: ForeignExecutionWatch, seen: string | null | undefined): Promise<Outcome> {
    const key = `foreign:${row.settlementId}`;
    if (seen === null || seen === undefined || row.blockNumber > head) return 'watching';
    if (seen === row.blockHash) {
      this.suspects.delete(key);
      if (head - row.blockNumber + 1 < depth) return 'watching';
      await this.options.settlements.markForeignExecutionFinal(row.settlementId);
      return 'final';
    }
    // a loss suspected on the last run is looked at again at once; a reorg first waits for a second sighting
    if (this.suspects.get(key) !== 'lost' && !this.confirmed(key, 'reorg')) return 'watching';
    const settlement = await this.options.settlements.findWithVerification(row.settlementId);
    if (!settlement) return 'watching';
    const found = await this.executionOf(chainId, settlement);
    if (found && found.paidToPayee >= BigInt(settlement.amount)) {
      const receipt = await this.options.chain.receipt(chainId, found.txHash);
      if (!receipt) return 'watching';
      this.suspects.delete(key);
      await this.options.settlements.moveForeignExecution(row.settlementId, { txHash: found.txHash, blockNumber: receipt.blockNumber, blockHash: receipt.blockHash });
      await this.options.settlements.recordFinality(row.settlementId, {
        finality: 'reorged',
        reorg: true,
        note: {
          reorg: { purpose: FOREIGN_EXECUTION, tx_hash: row.txHash, removed_from_block: row.blockNumber, action: found.txHash === row.txHash ? 'mined again' : 'executed by another transaction' },
          reincluded: { tx_hash: found.txHash, block: receipt.blockNumber },
        },
      });
      return 'reorged';
    }
    if (!this.confirmed(key, 'lost')) return 'watching';
    const told = lastTold(settlement);
    const change: ReorgChange = {
      purpose: FOREIGN_EXECUTION,
      tx_hash: row.txHash,
      reported: 'confirmed',
      now: 'lost',
      block_before_reorg: row.blockNumber,
      item: {
        reported: told,
        now: { merchant_paid: false, fee_collected: told.fee_collected, reason: 'the transaction that executed the payment (not ours) left the chain in a reorg, and no transaction executes it now' },
      },
    };
    await this.changedFor(row.settlementId, FOREIGN_EXECUTION, change, settlement);
    return 'changed';
  }

  /**
   * Who executed the settlement's payment, as its own mechanism finds it (EIP-3009's AuthorizationUsed,
   * Permit2's transfer through x402's proxy). A payment paid in a way no transaction can be told from
   * (`unattributed`) is neither paid nor unpaid: it throws, the row is looked at again next run.
   */
  private async executionOf(chainId: number, settlement: SettlementWithVerification): Promise<Exclude<Execution, { unattributed: string }> | undefined> {
    const { mechanism, parsed } = paymentOf(settlement);
    // our own executor's batches are told by their per-item logs, not taken for a stranger's contract
    const found = await evmExecutionOf(mechanism).findExecution(parsed, withOurExecutor(this.options.chain.mechanismChain(chainId), this.options.treasury));
    if (found && 'unattributed' in found) throw new Error(`settlement ${settlement.id}: who executed its payment cannot be told: ${found.unattributed}`);
    return found;
  }

  private async deepEnough(depth: number, head: number, blockNumber: number, row: AwaitingFinality): Promise<'watching' | 'final'> {
    if (head - blockNumber + 1 < depth) return 'watching';
    await this.options.transactions.markFinal(row.id);
    return 'final';
  }

  /** The settlements a transaction served: its own, or every settlement of its executor batch. */
  private async settlementsOf(row: AwaitingFinality): Promise<string[]> {
    if (row.purpose !== 'settle') return [row.settlementId];
    if (!this.options.batches) throw new Error(`finality watcher has no batch repository for settle transaction ${row.id}`);
    return this.options.batches.settlementsOf(row.settlementId);
  }

  /**
   * The settlements of the transaction (`settlementIds`) whose outcome on chain (now: `receipt`, or null when its nonce went to
   * another transaction) is not what their merchants were last told, with the change; only reads. A fee or
   * transfer transaction is its settlement's outcome. A `settle` batch is not: it can succeed while an item
   * fails inside it (in the new order a payer's balance was spent, or another authorization of the same nonce
   * was mined first), and an item that failed can now succeed, so each settlement is judged by its own item.
   * `unfinished` while a settlement of the batch has not recorded its first outcome yet: judged next run.
   */
  private async judge(chainId: number, row: AwaitingFinality, receipt: FinalityReceipt | null, settlementIds: readonly string[]): Promise<Judged[] | 'unfinished'> {
    const now = receipt?.status ?? 'lost';
    if (row.purpose !== 'settle') {
      if (now === row.status) return [];
      return [{ settlementId: row.settlementId, change: { purpose: row.purpose, tx_hash: row.minedHash, reported: row.status, now, block_before_reorg: row.blockNumber } }];
    }
    const settlements = await Promise.all(settlementIds.map((id) => this.options.settlements.findWithVerification(id)));
    if (settlements.some((s) => s && s.state !== 'settled' && s.state !== 'failed')) return 'unfinished';
    const outcomes = receipt?.status === 'confirmed' ? itemOutcomes(receipt.logs, this.options.treasury) : new Map();
    const judged: Judged[] = [];
    for (const settlement of settlements) {
      if (!settlement) continue;
      const told = lastTold(settlement);
      const item = outcomes.get(itemKey(settlement.payer, settlement.nonce));
      const itemNow = item?.settled
        ? { merchant_paid: true, fee_collected: true }
        : { ...(await this.paidElsewhere(chainId, row, settlement)), fee_collected: false, reason: item?.reason ?? whyNoItem(receipt) };
      // the fee is compared only until a first change was told: what was told of it since is in the notes, not the row
      const feeDiffers = settlement.finality !== 'changed' && itemNow.fee_collected !== told.fee_collected;
      if (itemNow.merchant_paid === told.merchant_paid && !feeDiffers) continue;
      const change: ReorgChange = { purpose: row.purpose, tx_hash: row.minedHash, reported: row.status, now, block_before_reorg: row.blockNumber, item: { reported: told, now: itemNow } };
      judged.push({ settlementId: settlement.id, change, settlement });
    }
    return judged;
  }

  private async tell(row: AwaitingFinality, judged: Judged[]): Promise<void> {
    for (const { settlementId, change, settlement } of judged) await this.changedFor(settlementId, row.purpose, change, settlement);
  }

  /**
   * Whether another transaction executed this settlement's payment to its merchant (then it was paid, with no
   * fee). A use by our own executor is another settlement's of the same payment, which reports it: not this one's.
   * Asked of the payment's own mechanism (findExecution): a Permit2 item someone else executed through x402's
   * proxy is found by its transfer, and an EIP-3009 authorization of the payer's that happens to share a Permit2
   * nonce's value never reads as this payment.
   */
  private async paidElsewhere(chainId: number, row: AwaitingFinality, settlement: SettlementWithVerification): Promise<{ merchant_paid: boolean; paid_by_tx?: string }> {
    const use = await this.executionOf(chainId, settlement);
    if (!use || use.txHash.toLowerCase() === row.minedHash.toLowerCase() || use.paidToPayee < BigInt(settlement.amount)) return { merchant_paid: false };
    if (use.to !== undefined && use.to.toLowerCase() === this.options.treasury.toLowerCase()) return { merchant_paid: false };
    return { merchant_paid: true, paid_by_tx: use.txHash };
  }

  /** `settlement`: the row when the caller read it already */
  private async changedFor(settlementId: string, purpose: string, change: ReorgChange, settlement?: SettlementWithVerification | null): Promise<void> {
    settlement ??= await this.options.settlements.findWithVerification(settlementId);
    const url = settlement?.verification.webhookUrl;
    let eventId: string | undefined;
    // the row keeps what the merchant was last told of its payment: the next reorg is judged against it
    const merchantPaid = change.item ? change.item.now.merchant_paid : purpose === 'transfer' ? change.now === 'confirmed' : undefined;
    await this.options.settlements.recordFinality(
      settlementId,
      { finality: 'changed', note: { outcome_changed: change }, ...(merchantPaid === undefined ? {} : { merchantPaid }) },
      url
        ? (updated) => {
            const event = this.options.outbox.row(reorgEvent(updated, url, change));
            eventId = event.id;
            return event;
          }
        : undefined,
    );
    // after commit; if this fails, the webhook sweeper enqueues the pending event
    if (eventId) await this.options.outbox.enqueue(eventId).catch(() => undefined);
    this.options.logger.error('a reorg changed the outcome of a settled transaction', { settlementId, ...change });
  }
}

/** Why a settlement has no settled item in its batch when the executor's logs give no reason. */
function whyNoItem(receipt: FinalityReceipt | null): string {
  if (!receipt) return 'the settle transaction is lost: its nonce went to another transaction';
  if (receipt.status === 'reverted') return 'the settle transaction reverted';
  return 'the settle transaction ran no executor item for it';
}

interface Judged {
  settlementId: string;
  change: ReorgChange;
  settlement?: SettlementWithVerification;
}

/**
 * What the merchant was last told of a settlement's money: the row's `merchant_paid` (a change told since
 * rewrote it), or, for a payment someone else executed before our batch (failed, no fee), the failure's
 * own `merchant_paid: true`; the fee as collected.
 */
function lastTold(settlement: SettlementWithVerification): SettlementMoney {
  const details = settlement.errorDetails as { merchant_paid?: unknown } | null;
  const paidElsewhere = settlement.finality !== 'changed' && settlement.state === 'failed' && details?.merchant_paid === true;
  return { merchant_paid: settlement.merchantPaid || paidElsewhere, fee_collected: settlement.feeCollectedAt !== null };
}

