import { OutcomeTimeoutError, replayRevertReason, type MinedTransactionReceipt, type TransactionOutcome } from '@facilitator/evm-sending';
import type { ChainTransactionRepository, ExternalTransaction } from '@facilitator/db';
import type { EvmTransactionResponse } from './api/relayer-api-types';
import type { ChainReader, MinedTransaction } from './chain-reader';
import { RelayerTransactionFailedError, RelayerUnavailableError } from './errors';
import { OPENZEPPELIN_RELAYER_PROVIDER } from './provider-name';
import type { ResolvedRelayerProviderOptions } from './provider-options';
import type { RelayerBindings } from './relayer-bindings';
import { ENDED_WITHOUT_SUCCESS, endedUnsigned, type RelayerStatusTracker } from './relayer-status-tracker';
import { givenUp, type RelayerSubmission } from './relayer-submission';
import type { StatusWakeups } from './status-wakeups';

/** Relayer statuses after which our node is asked for a receipt at once, not only on a new head. */
const LOOK_AT_CHAIN: ReadonlySet<string> = new Set(['mined', 'confirmed', 'failed', 'expired', 'canceled']);

/**
 * `waitForOutcome` for a relayer transaction. The relayer is followed for what only it knows (which hashes
 * it signed, whether it gave up), by polling and on signed webhooks; the outcome itself, receipt and logs,
 * comes from our own node, so a relayer's word never settles a payment.
 */
export class RelayerOutcomeWatcher {
  constructor(
    private readonly store: ChainTransactionRepository,
    private readonly chain: ChainReader,
    private readonly bindings: RelayerBindings,
    private readonly tracker: RelayerStatusTracker,
    private readonly submission: RelayerSubmission,
    private readonly wakeups: StatusWakeups,
    private readonly options: ResolvedRelayerProviderOptions,
  ) {}

  async wait(transactionId: string, confirmations: number): Promise<TransactionOutcome> {
    const started = Date.now();
    const required = Math.max(1, Math.floor(confirmations));
    let row = await this.store.external.get(transactionId, OPENZEPPELIN_RELAYER_PROVIDER);
    if (row.status === 'confirmed' || row.status === 'reverted') return this.storedOutcome(row);
    // a row a crash left without a relayer id is placed first (looked for, or sent), as the local keys resend
    row = await this.submission.ensureAccepted(row);
    const binding = this.bindings.get(row.chainId, row.fromAddress);
    let relayer: EvmTransactionResponse | undefined;
    let askedAt = 0;
    let woken = false;
    let relayerDown = false;
    let endedSince: number | undefined;
    let seenHead = -1;
    // the relayer is asked in the background: a slow relayer never delays reading an outcome from our node
    let asking: Promise<void> | undefined;
    let failure: unknown;
    const ask = (current: ExternalTransaction) =>
      this.tracker.refresh(current, binding).then(
        (answer) => {
          ({ row, relayer } = answer);
          relayerDown = false;
        },
        (error: unknown) => {
          if (!(error instanceof RelayerUnavailableError)) failure = error;
          // the hashes already known are still watched on our node; the outcome timeout bounds the rest
          else if (!relayerDown) this.options.logger.warn('relayer unavailable while waiting for a transaction; still watching the chain', { id: current.id, error: error.message });
          relayerDown = true;
        },
      );
    for (;;) {
      if (!asking && (woken || Date.now() - askedAt >= this.options.statusPollIntervalMs)) {
        askedAt = Date.now();
        asking = ask(row).finally(() => (asking = undefined));
        // the first answer is waited for when nothing can be watched without it
        if (row.providerHashes.length === 0) await asking;
      }
      if (failure) throw failure;
      if (row.status === 'confirmed' || row.status === 'reverted') return this.storedOutcome(row);
      if (row.status === 'replaced') throw givenUp(row);
      const head = await this.chain.headBlock(row.chainId);
      let mined: MinedTransactionReceipt | null = null;
      if (head !== seenHead || (relayer && LOOK_AT_CHAIN.has(relayer.status))) {
        seenHead = head;
        mined = await this.chain.findMined(row.chainId, row.providerHashes);
        if (mined) {
          const tx = await this.chain.minedTransaction(row.chainId, mined.hash);
          if (!isOurs(tx, row)) {
            if (tx.from === row.fromAddress && (row.nonce === null || tx.nonce === row.nonce)) return this.nonceTaken(row, relayer, mined);
            throw new Error(`the relayer reported hash ${mined.hash} for transaction ${row.id}, but the chain has it from ${tx.from} with nonce ${tx.nonce}`);
          }
          if (Math.max(head, mined.blockNumber) - mined.blockNumber + 1 >= required) return this.record(row, mined, tx, relayer);
        }
      }
      if (!mined && relayer && ENDED_WITHOUT_SUCCESS.has(relayer.status)) {
        if (endedUnsigned(relayer)) {
          await this.store.external.markGivenUp(row.id, relayer.status, relayer.status_reason ?? null);
          throw new RelayerTransactionFailedError(row.id, row.providerTransactionId, relayer.status, relayer.status_reason ?? null, true);
        }
        // signed, and nothing of it on our node: our node may lag the relayer's by a block or two
        endedSince ??= Date.now();
        if (Date.now() - endedSince >= this.options.finalGraceMs) {
          this.options.logger.error('the relayer ended a signed transaction that our node never saw mined', {
            id: row.id, relayerTransactionId: row.providerTransactionId, relayerStatus: relayer.status, reason: relayer.status_reason, hashes: row.providerHashes,
          });
          throw new RelayerTransactionFailedError(row.id, row.providerTransactionId, relayer.status, relayer.status_reason ?? null, false);
        }
      }
      if (Date.now() - started >= this.options.outcomeTimeoutMs) throw new OutcomeTimeoutError(transactionId, Date.now() - started);
      woken = await this.wakeups.wait(row.providerTransactionId!, this.options.receiptPollIntervalMs);
    }
  }

  /** A mined outcome stored by an earlier wait (maybe in another process): its logs are read again from the chain. */
  private async storedOutcome(row: ExternalTransaction): Promise<TransactionOutcome> {
    const hash = row.minedHash!;
    const blockNumber = Number(row.blockNumber);
    if (row.status === 'reverted') return row.revertReason === null ? { status: 'reverted', hash, blockNumber } : { status: 'reverted', hash, blockNumber, reason: row.revertReason };
    const receipt = await this.chain.findMined(row.chainId, [hash]);
    if (!receipt) throw new RelayerUnavailableError(`mined transaction ${hash} has no receipt on our node (a reorg?)`, undefined, false);
    return { status: 'confirmed', hash, blockNumber: receipt.blockNumber, logs: receipt.logs };
  }

  private async record(row: ExternalTransaction, receipt: MinedTransactionReceipt, tx: MinedTransaction, relayer: EvmTransactionResponse | undefined): Promise<TransactionOutcome> {
    const { hash, blockNumber, blockHash } = receipt;
    const version = { rawTransaction: tx.rawTransaction, fees: tx.fees };
    if (receipt.status === 1) {
      await this.store.external.recordMined(row.id, { status: 'confirmed', hash, blockNumber, blockHash, ...version });
      this.options.logger.info('relayer transaction confirmed', { id: row.id, hash, blockNumber });
      return { status: 'confirmed', hash, blockNumber, logs: receipt.logs };
    }
    const call = { from: row.fromAddress, to: row.toAddress, data: row.data, gasLimit: tx.gasLimit };
    const reason = (await replayRevertReason(this.chain.network(row.chainId), row.chainId, call, receipt)) ?? relayer?.status_reason ?? undefined;
    await this.store.external.recordMined(row.id, { status: 'reverted', hash, blockNumber, blockHash, revertReason: reason, ...version });
    this.options.logger.warn('relayer transaction reverted on chain', { id: row.id, hash, blockNumber, reason });
    return reason === undefined ? { status: 'reverted', hash, blockNumber } : { status: 'reverted', hash, blockNumber, reason };
  }

  /**
   * A transaction of the relayer's with our nonce was mined and it is not ours (its no-op replacement, after
   * a cancel or an expiry): nothing of ours can ever be mined.
   */
  private async nonceTaken(row: ExternalTransaction, relayer: EvmTransactionResponse | undefined, receipt: MinedTransactionReceipt): Promise<never> {
    const status = relayer?.status ?? 'canceled';
    const reason = `nonce ${row.nonce} taken by the relayer's transaction ${receipt.hash}, which is not ours`;
    await this.store.external.markGivenUp(row.id, status, reason);
    throw new RelayerTransactionFailedError(row.id, row.providerTransactionId, status, reason, true);
  }
}

/** Our sender, target and calldata (and nonce, once known). */
function isOurs(tx: MinedTransaction, row: ExternalTransaction): boolean {
  return tx.from === row.fromAddress && tx.to === row.toAddress && tx.data === row.data.toLowerCase() && (row.nonce === null || tx.nonce === row.nonce);
}
