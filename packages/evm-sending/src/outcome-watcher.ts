import type { ChainTransactionRepository, StoredTransaction } from '@facilitator/db';
import type { MinedTransactionReceipt } from './mined-receipt';
import { NonceConsumedError, OutcomeTimeoutError, RpcUnavailableError, TransactionRejectedError } from './errors';
import { replaceAfterMsOn, type ResolvedSendingOptions } from './sending-options';
import { setTimeout as sleep } from 'node:timers/promises';
import { latest, type TransactionDispatcher } from './transaction-dispatcher';
import type { TransactionOutcome } from './transaction-provider';

type Observation = { kind: 'unmined' } | { kind: 'awaiting_confirmations' } | { kind: 'final'; outcome: TransactionOutcome };

/**
 * `waitForOutcome`: polls the receipts of every version of a transaction until one is mined deep enough,
 * and meanwhile keeps the transaction alive: hands it to the node again in case it was dropped, and
 * replaces it with higher fees when it stays unmined.
 */
export class OutcomeWatcher {
  constructor(
    private readonly store: ChainTransactionRepository,
    private readonly dispatcher: TransactionDispatcher,
    private readonly options: ResolvedSendingOptions,
  ) {}

  async wait(transactionId: string, confirmations: number): Promise<TransactionOutcome> {
    const started = Date.now();
    const required = Math.max(1, Math.floor(confirmations));
    let row = await this.store.getById(transactionId);
    // a transaction a crash left unbroadcast is sent at once; others are first given a rebroadcast interval
    let lastKeepAlive = row.status === 'allocated' || row.status === 'signed' ? 0 : started;
    let outageSince: number | undefined;
    let observedAt = { head: -1, time: 0 };
    for (;;) {
      try {
        // Receipts only change with a new block: with many transactions in flight, polling one shared
        // block number instead of every receipt saves most calls. Receipts are still read at least every
        // rebroadcast interval, for a node whose receipts lag its head.
        const head = await this.dispatcher.headBlock(row.chainId);
        const arrived = this.dispatcher.sync.receiptOf(row.attempts.map((a) => a.hash)) !== undefined;
        const stale = arrived || head !== observedAt.head || Date.now() - observedAt.time >= this.options.rebroadcastIntervalMs;
        const observed: Observation = stale ? await this.observe(row, required, head) : { kind: 'unmined' };
        if (stale) observedAt = { head, time: Date.now() };
        if (observed.kind === 'final') return observed.outcome;
        outageSince = undefined;
        if (observed.kind === 'unmined' && Date.now() - lastKeepAlive >= this.options.rebroadcastIntervalMs) {
          lastKeepAlive = Date.now(); // before the attempt: a failing re-send is retried at the interval, not every poll
          // reloaded: another process may have signed a replacement, and its hash must be watched too
          row = await this.keepAlive(await this.store.getById(transactionId));
        }
      } catch (error) {
        if (error instanceof TransactionRejectedError && error.retryable) {
          // e.g. the key ran out of ETH: a version may still sit in the pool, and a later re-send may succeed
          this.options.logger.error('node refused to take the transaction again; still waiting', { id: transactionId, error: error.message });
        } else {
          if (!(error instanceof RpcUnavailableError)) throw error;
          if (Date.now() - (outageSince ?? Date.now()) >= this.options.rpcOutageToleranceMs) throw error;
          // once when the outage starts, not once per poll
          if (outageSince === undefined) this.options.logger.warn('RPC unavailable while waiting for a transaction; still waiting', { id: transactionId, error: error.message });
          outageSince ??= Date.now();
        }
      }
      if (Date.now() - started >= this.options.outcomeTimeoutMs) throw new OutcomeTimeoutError(transactionId, Date.now() - started);
      // a synchronous send's receipt ends the pause as soon as it arrives
      const arrival = this.dispatcher.sync.arrival(row.attempts.map((a) => a.hash));
      await (arrival ? Promise.race([sleep(this.options.receiptPollIntervalMs), arrival]) : sleep(this.options.receiptPollIntervalMs));
    }
  }

  private async observe(row: StoredTransaction, required: number, head: number): Promise<Observation> {
    const mined = await this.dispatcher.findMined(row, required === 1);
    if (!mined) return { kind: 'unmined' };
    const { receipt } = mined;
    // a head read before the receipt may be older than the receipt's block: that counts as 1 confirmation
    if (required > 1 && Math.max(head, receipt.blockNumber) - receipt.blockNumber + 1 < required) return { kind: 'awaiting_confirmations' };
    return { kind: 'final', outcome: await this.record(row, receipt) };
  }

  private async record(row: StoredTransaction, receipt: MinedTransactionReceipt): Promise<TransactionOutcome> {
    const { hash, blockNumber, blockHash } = receipt;
    if (receipt.status === 1) {
      await this.store.recordMined(row.id, { status: 'confirmed', hash, blockNumber, blockHash });
      return { status: 'confirmed', hash, blockNumber, logs: receipt.logs };
    }
    const reason = await this.dispatcher.revertReason(row, receipt);
    await this.store.recordMined(row.id, { status: 'reverted', hash, blockNumber, blockHash, revertReason: reason });
    this.options.logger.warn('transaction reverted on chain', { id: row.id, hash, blockNumber, reason });
    return reason === undefined ? { status: 'reverted', hash, blockNumber } : { status: 'reverted', hash, blockNumber, reason };
  }

  /** Re-sends the newest version, or replaces it once it has waited `replaceAfterMs`. */
  private async keepAlive(row: StoredTransaction): Promise<StoredTransaction> {
    if (row.status === 'replaced') {
      // another process concluded the nonce is lost; believe it unless a receipt says otherwise
      if (!(await this.dispatcher.findMined(row))) throw new NonceConsumedError(row.id, row.fromAddress, row.nonce);
      return row;
    }
    if (row.status !== 'broadcast') return this.dispatcher.ensureSent(row);
    const age = Date.now() - latest(row).createdAt.getTime();
    if (age >= replaceAfterMsOn(this.options, row.chainId)) {
      // a lower nonce left unsent holds ours in the node's queue, and no fee bump would move it
      const lowerSent = await this.dispatcher.sendLowerNonces(row);
      if (lowerSent === 0 && (await this.dispatcher.replace(row, `unmined after ${age} ms`))) return this.store.getById(row.id);
    }
    return this.dispatcher.ensureSent(row);
  }
}
