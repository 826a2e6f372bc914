import type { ChainTransactionRepository, ExternalTransaction, ExternalTransactionStatements } from '@facilitator/db';
import { timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { rowDigest, UnauthenticatedTransactionError } from '@facilitator/evm-sending';
import type { OpenZeppelinRelayerClient } from './api/relayer-api-client';
import type { EvmTransactionRequest } from './api/relayer-api-types';
import type { ChainReader } from './chain-reader';
import { RelayerRequestRefusedError, RelayerTransactionFailedError, RelayerUnavailableError } from './errors';
import { OPENZEPPELIN_RELAYER_PROVIDER } from './provider-name';
import type { RelayerSendPhase, ResolvedRelayerProviderOptions } from './provider-options';
import type { RelayerBindings } from './relayer-bindings';
import { endedUnsigned, type RelayerStatusTracker } from './relayer-status-tracker';
import type { RelayerReconciler } from './reconciliation';
import type { StatusWakeups } from './status-wakeups';

/** The target and calldata a caller derived for a row (lowercase). */
interface CallersCall {
  to: string;
  data: string;
}

// a row goes round at most this often: a lost claim (another row took our transaction) sends once more
const MAX_ROUNDS = 4;

/**
 * Hands a stored row's transaction to the relayer exactly once, whatever crashed before.
 *
 * One sender per row at a time (a Postgres advisory lock that a dead process frees at once). Under it: a
 * row that a request was ever made for (`provider_requested_at`) is first looked for on the relayer
 * (reconciliation), once the relayer can no longer be acting on that request; only when the relayer holds
 * nothing that could be it is a request made, its time stored before it is made, and the relayer's id
 * stored as soon as it answers.
 */
export class RelayerSubmission {
  constructor(
    private readonly store: ChainTransactionRepository,
    private readonly client: OpenZeppelinRelayerClient,
    private readonly chain: ChainReader,
    private readonly bindings: RelayerBindings,
    private readonly reconciler: RelayerReconciler,
    private readonly tracker: RelayerStatusTracker,
    private readonly wakeups: StatusWakeups,
    private readonly options: ResolvedRelayerProviderOptions,
  ) {}

  /**
   * The row once the relayer holds its transaction and has signed it (a hash and a nonce). `callers`: the
   * target and calldata the caller derived itself (submit), which a row stored before rows were authenticated
   * must match.
   */
  async ensureSigned(row: ExternalTransaction, callers?: CallersCall): Promise<ExternalTransaction> {
    return this.awaitSignature(await this.ensureAccepted(row, callers));
  }

  /** The row once its relayer id is stored. */
  async ensureAccepted(row: ExternalTransaction, callers?: CallersCall): Promise<ExternalTransaction> {
    for (let round = 1; ; round++) {
      if (row.providerTransactionId) return row;
      if (row.status === 'replaced') throw givenUp(row);
      if (round > MAX_ROUNDS) throw new RelayerUnavailableError(`transaction ${row.id} could not be placed with the relayer in ${MAX_ROUNDS} rounds`, undefined, true);
      row = await this.store.withExternalSendLock(row.id, (locked) => this.sendOnce(locked, row.id, callers));
    }
  }

  private async sendOnce(locked: ExternalTransactionStatements, id: string, callers?: CallersCall): Promise<ExternalTransaction> {
    const row = await locked.get(id, OPENZEPPELIN_RELAYER_PROVIDER);
    if (row.providerTransactionId || row.status !== 'allocated') return row;
    this.refuseUnauthenticated(row, callers);
    const binding = this.bindings.get(row.chainId, row.fromAddress);
    if (row.requestedAgeMs !== null) {
      // an earlier request's answer was lost (a crash, a timeout, a 5xx): the relayer may hold its transaction
      const wait = this.options.reconcileAfterMs - row.requestedAgeMs;
      if (wait > 0) {
        this.options.logger.info('waiting until the relayer can no longer act on the earlier request, then looking for it', { id, waitMs: Math.ceil(wait) });
        await sleep(wait);
      }
      if (await this.reconciler.claim(locked, row, binding)) return locked.get(id, OPENZEPPELIN_RELAYER_PROVIDER);
      this.options.logger.warn('the relayer holds nothing from the earlier request: sending it', { id, settlementId: row.settlementId, purpose: row.purpose });
    }
    // read before the request is marked: a failing fee read leaves no request open
    const body = await this.body(row);
    await locked.markRequested(id);
    await this.phase('requested', { id });
    let accepted;
    try {
      accepted = await this.client.sendTransaction(binding.id, body);
    } catch (error) {
      // refused: the relayer created nothing, so nothing needs looking for; otherwise the mark stays
      if (error instanceof RelayerRequestRefusedError || (error instanceof RelayerUnavailableError && !error.maybeReceived)) await locked.clearRequested(id);
      throw error;
    }
    await this.phase('accepted', { id, relayerTransactionId: accepted.id });
    if ((await locked.recordAccepted(id, accepted.id, accepted.status, accepted.status_reason ?? null)) === 'taken') {
      // a row with identical calldata claimed it while reconciling: that row's request made nothing, so one of
      // the same kind may be ours to take; when none is, this request's answer is known and the mark goes
      const other = await this.reconciler.claim(locked, row, binding);
      if (!other) await locked.clearRequested(id);
    } else {
      this.options.logger.info('transaction accepted by the relayer', { id, relayerId: binding.id, relayerTransactionId: accepted.id });
    }
    return locked.get(id, OPENZEPPELIN_RELAYER_PROVIDER);
  }

  /**
   * Only a row this worker stored is handed to the relayer (read under the send lock, just before the request):
   * its authenticator is the API key's HMAC over it, or (a row stored before rows were authenticated) it is the
   * call the caller derived. A row a database writer inserted or rewrote is refused, nothing sent (issue 40).
   */
  private refuseUnauthenticated(row: ExternalTransaction, callers?: CallersCall): void {
    const fields = { settlementId: row.settlementId, purpose: row.purpose, chainId: row.chainId, from: row.fromAddress, to: row.toAddress, data: row.data, gasLimit: BigInt(row.gasLimit) };
    const expected = this.client.rowAuthenticator(rowDigest(fields));
    const authentic = row.authenticator !== null && row.authenticator.length === expected.length && timingSafeEqual(Buffer.from(row.authenticator), Buffer.from(expected));
    const legacyMatch = row.authenticator === null && callers !== undefined && callers.to === row.toAddress && callers.data === row.data;
    if (authentic || legacyMatch) return;
    this.options.logger.error('stored transaction refused: its authenticator is not ours, nothing sent to the relayer', {
      id: row.id, settlementId: row.settlementId, purpose: row.purpose, from: row.fromAddress, to: row.toAddress,
    });
    throw new UnauthenticatedTransactionError(row.id);
  }

  /** Waits (bounded by `signWaitMs`) until the relayer has signed the transaction: its first hash and its nonce. */
  private async awaitSignature(row: ExternalTransaction): Promise<ExternalTransaction> {
    if (isSigned(row)) return row;
    const binding = this.bindings.get(row.chainId, row.fromAddress);
    const deadline = Date.now() + this.options.signWaitMs;
    for (;;) {
      const refreshed = await this.tracker.refresh(row, binding);
      row = refreshed.row;
      if (isSigned(row)) return row;
      if (row.status === 'replaced') throw givenUp(row);
      if (endedUnsigned(refreshed.relayer)) {
        await this.store.external.markGivenUp(row.id, refreshed.relayer.status, refreshed.relayer.status_reason ?? null);
        throw new RelayerTransactionFailedError(row.id, row.providerTransactionId, refreshed.relayer.status, refreshed.relayer.status_reason ?? null, true);
      }
      if (Date.now() >= deadline) {
        throw new RelayerUnavailableError(`the relayer accepted transaction ${row.id} but has not signed it within ${this.options.signWaitMs} ms`, undefined, false);
      }
      await this.wakeups.wait(row.providerTransactionId!, this.options.receiptPollIntervalMs);
    }
  }

  private async body(row: ExternalTransaction): Promise<EvmTransactionRequest> {
    // our estimate (with its margin, within the request's cap) is sent: the relayer's own estimate would fall
    // back to a default gas limit when the call reverts, and send anyway
    const base = { to: row.toAddress, value: 0n, data: row.data, gas_limit: BigInt(row.gasLimit) };
    if (this.options.speed) return { ...base, speed: this.options.speed };
    const fees = await this.chain.fees(row.chainId);
    return { ...base, max_fee_per_gas: fees.maxFeePerGas, max_priority_fee_per_gas: fees.maxPriorityFeePerGas };
  }

  private async phase(phase: RelayerSendPhase, transaction: { id: string; relayerTransactionId?: string }): Promise<void> {
    await this.options.onPhase?.(phase, transaction);
  }
}

export function isSigned(row: ExternalTransaction): boolean {
  return row.providerHashes.length > 0 && row.nonce !== null;
}

/** A row stored as given up: the relayer ended it and nothing of it can be mined. */
export function givenUp(row: ExternalTransaction): RelayerTransactionFailedError {
  return new RelayerTransactionFailedError(row.id, row.providerTransactionId, row.providerStatus ?? 'failed', row.providerStatusReason, true);
}
