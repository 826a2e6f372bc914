import type { ExternalTransaction, ExternalTransactionStatements } from '@facilitator/db';
import type { OpenZeppelinRelayerClient } from './api/relayer-api-client';
import type { EvmTransactionResponse } from './api/relayer-api-types';
import { OPENZEPPELIN_RELAYER_PROVIDER } from './provider-name';
import type { ResolvedRelayerProviderOptions } from './provider-options';
import type { RelayerBinding } from './relayer-bindings';

/**
 * Whether a transaction on the relayer's list is one we could have sent for `row`: same relayer, same
 * target, same calldata, no value, created no earlier than the row (less the clocks' allowed skew).
 */
export function couldBeOurs(candidate: EvmTransactionResponse, row: Pick<ExternalTransaction, 'toAddress' | 'data'>, binding: RelayerBinding, notBeforeMs: number): boolean {
  return (
    candidate.relayer_id === binding.id &&
    (candidate.to ?? '').toLowerCase() === row.toAddress &&
    normalizeHex(candidate.data) === normalizeHex(row.data) &&
    isZero(candidate.value) &&
    createdAtMs(candidate) >= notBeforeMs
  );
}

/** The relayer's `created_at` (RFC 3339, up to nanoseconds) in ms; NaN when unreadable, which matches nothing. */
export function createdAtMs(candidate: Pick<EvmTransactionResponse, 'created_at'>): number {
  // Date.parse takes at most milliseconds on every engine: cut the fraction there
  return Date.parse(candidate.created_at.replace(/(\.\d{3})\d+/, '$1'));
}

/**
 * Finds, after a request whose answer was lost, the transaction the relayer may have made of it, and claims
 * it for the row. Claiming stores its id on the row, which a unique key lets only one row hold: a relayer
 * transaction is never owned twice.
 *
 * The relayer stores nothing of ours but the transaction itself (no client reference), so a match is by
 * relayer, target and calldata. Two rows can have identical calldata (two fee legs of one merchant on the
 * sequential path: the same transferFrom); then either may claim either transaction. That is safe: both
 * transactions have the same effect (same sender, target, calldata), and the count is kept per calldata:
 * every relayer transaction of that calldata was made by the request of one row, each row claims at most
 * one, so a row that finds none unclaimed is one whose own request created nothing (or whose transaction a
 * sibling claimed, the sibling's own request having created nothing), and sending for it keeps one
 * transaction per row. Which of two such rows is charged by which transaction can swap; how many cannot.
 */
/** Pages read at most when the relayer's list is not newest first. */
const MAX_RECONCILE_PAGES = 200;

export class RelayerReconciler {
  constructor(
    private readonly client: OpenZeppelinRelayerClient,
    private readonly options: ResolvedRelayerProviderOptions,
  ) {}

  /** The relayer transaction now claimed for the row, or null when none could be ours. */
  async claim(locked: ExternalTransactionStatements, row: ExternalTransaction, binding: RelayerBinding): Promise<EvmTransactionResponse | null> {
    const candidates = await this.candidates(row, binding);
    if (candidates.length === 0) return null;
    const claimed = await locked.claimedAmong(OPENZEPPELIN_RELAYER_PROVIDER, candidates.map((c) => c.id));
    // oldest first: the first request of the row is the likeliest to be the one that was lost
    for (const candidate of candidates.filter((c) => !claimed.has(c.id)).sort((a, b) => createdAtMs(a) - createdAtMs(b))) {
      if ((await locked.recordAccepted(row.id, candidate.id, candidate.status, candidate.status_reason ?? null)) === 'stored') {
        this.options.logger.warn('relayer transaction found after a lost answer, claimed', {
          id: row.id, settlementId: row.settlementId, purpose: row.purpose, relayerTransactionId: candidate.id, relayerStatus: candidate.status,
        });
        return candidate;
      }
    }
    return null;
  }

  /**
   * The relayer's transactions that could be ours. Read newest first until they predate the row, but only
   * while the list shows itself in that order: older relayer releases and its in-memory storage list in no
   * order, and stopping early there could miss the lost transaction and send a second one. Then every page
   * is read; a list too long to read whole ends the attempt (retried, then parked), never a blind resend.
   */
  private async candidates(row: ExternalTransaction, binding: RelayerBinding): Promise<EvmTransactionResponse[]> {
    const notBeforeMs = row.createdAt.getTime() - this.options.clockSkewToleranceMs;
    const found: EvmTransactionResponse[] = [];
    const perPage = this.options.reconcilePageSize;
    let ordered = true;
    let previousMs = Infinity;
    for (let page = 1; page <= MAX_RECONCILE_PAGES; page++) {
      const { items, totalItems } = await this.client.listTransactions(binding.id, page, perPage);
      // a transaction created while we page shifts the list down: one may be read twice, none is skipped
      for (const c of items) {
        if (couldBeOurs(c, row, binding, notBeforeMs) && !found.some((f) => f.id === c.id)) found.push(c);
        if (createdAtMs(c) > previousMs) ordered = false;
        previousMs = createdAtMs(c);
      }
      const olderThanRow = ordered && items.length > 0 && createdAtMs(items[items.length - 1]) < notBeforeMs;
      if (olderThanRow || items.length < perPage || page * perPage >= totalItems) return found;
    }
    throw new Error(
      `relayer ${binding.id} lists its transactions in no order and more than ${MAX_RECONCILE_PAGES * perPage} of them: cannot tell whether the lost request for ${row.id} was acted on, so nothing is sent again`,
    );
  }
}

function normalizeHex(value: string | null | undefined): string {
  const hex = (value ?? '').toLowerCase();
  return hex.startsWith('0x') ? hex.slice(2) : hex;
}

function isZero(value: string | number | null | undefined): boolean {
  try {
    return BigInt(value ?? 0) === 0n;
  } catch {
    return false;
  }
}
