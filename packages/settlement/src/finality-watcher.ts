import type { AwaitingFinality, ChainTransactionRepository, SettlementBatchRepository, SettlementRepository } from '@facilitator/db';
import { EXACT_EIP3009 } from '@facilitator/core';
import type { Logger } from '@facilitator/logging';
import { itemKey, itemOutcomes } from '@facilitator/settlement-contract';
import { webhookEventRow, type WebhookOutbox } from '@facilitator/webhooks';
import { termsOf } from './payment';
import { reorgEvent, type ReorgChange, type SettlementMoney } from './settlement-events';
import type { SettlementWithVerification } from './step';

type Outcome = 'watching' | 'final' | 'reorged' | 'changed';

/** What the watcher reads of a chain and sends to it. */
export interface FinalityChain {
  head(chainId: number): Promise<number>;
  /** the hash of the chain's block at this height now (null past the head: of a lagging endpoint too) */
  blockHash(chainId: number, blockNumber: number): Promise<string | null>;
  /** the receipt of a mined transaction, or null when no block of the chain holds it */
  receipt(chainId: number, hash: string): Promise<FinalityReceipt | null>;
  /**
   * the transaction that used this EIP-3009 authorization (anyone's), with what it paid the merchant; none
   * when the authorization is unused
   */
  authorizationUse(chainId: number, payer: string, nonce: string, merchant: string): Promise<{ transactionHash: string; paidToMerchant: bigint; to?: string } | undefined>;
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
  settlements: Pick<SettlementRepository, 'recordFinality' | 'markFinalWhereSettled' | 'findWithVerification'>;
  /** the settlements of an executor batch: a `settle` transaction's reorg is each of theirs */
  batches?: Pick<SettlementBatchRepository, 'settlementsOf'>;
  /** enqueues a settlement.reorged event once its row is stored */
  outbox: Pick<WebhookOutbox, 'enqueue'>;
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
      if (rows.length === 0) continue;
      const head = await this.options.chain.head(chainId);
      // one block read per height, not a receipt per transaction: only the transactions whose block is no
      // longer the one they were mined in (or that are out of the chain) need their receipt read
      const heights = [...new Set(rows.flatMap((r) => (r.blockNumber === null ? [] : [r.blockNumber])))];
      const hashes = new Map(await Promise.all(heights.map(async (n) => [n, await this.options.chain.blockHash(chainId, n)] as const)));
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
    for (const { settlementId, change, settlement } of judged) await this.changedFor(settlementId, row, change, settlement);
  }

  /**
   * Whether another transaction executed this settlement's authorization to its merchant (then it was paid,
   * with no fee). A use by our own executor is another settlement's of the same payment, which reports it: not this one's.
   * The search is the token's (EIP-3009's AuthorizationUsed). A Permit2 item (executor v2) is never searched
   * there: the token knows nothing of Permit2 nonces, and an EIP-3009 authorization of the payer's that
   * happens to share the nonce's value must not read as this payment; it is told "not paid", never paid twice.
   */
  private async paidElsewhere(chainId: number, row: AwaitingFinality, settlement: SettlementWithVerification): Promise<{ merchant_paid: boolean; paid_by_tx?: string }> {
    if (settlement.mechanism !== EXACT_EIP3009) return { merchant_paid: false };
    const terms = termsOf(settlement);
    const use = await this.options.chain.authorizationUse(chainId, terms.payer, terms.nonce.value, terms.payee);
    if (!use || use.transactionHash.toLowerCase() === row.minedHash.toLowerCase() || use.paidToMerchant < BigInt(settlement.amount)) return { merchant_paid: false };
    if (use.to !== undefined && use.to.toLowerCase() === this.options.treasury.toLowerCase()) return { merchant_paid: false };
    return { merchant_paid: true, paid_by_tx: use.transactionHash };
  }

  /** `settlement`: the row when the caller read it already */
  private async changedFor(settlementId: string, row: AwaitingFinality, change: ReorgChange, settlement?: SettlementWithVerification | null): Promise<void> {
    settlement ??= await this.options.settlements.findWithVerification(settlementId);
    const url = settlement?.verification.webhookUrl;
    let eventId: string | undefined;
    // the row keeps what the merchant was last told of its payment: the next reorg is judged against it
    const merchantPaid = change.item ? change.item.now.merchant_paid : row.purpose === 'transfer' ? change.now === 'confirmed' : undefined;
    await this.options.settlements.recordFinality(
      settlementId,
      { finality: 'changed', note: { outcome_changed: change }, ...(merchantPaid === undefined ? {} : { merchantPaid }) },
      url
        ? (updated) => {
            const event = webhookEventRow(reorgEvent(updated, url, change));
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

