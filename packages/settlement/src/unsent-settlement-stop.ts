import type { Settlement, SettlementStore, SettlementState } from '@facilitator/db';
import type { WebhookOutbox } from '@facilitator/webhooks';
import { failed, settlementDoomed } from './failures';
import { transitionWithFinalEvent } from './final-transition';
import { isFinal } from './states';
import { SettlementWaitReason } from './wait-reasons';

/** The states in which nothing of a settlement has been sent, unless the worker claimed it (send_claimed_at). */
export const STOPPABLE_STATES: readonly SettlementState[] = ['pending', 'check_allowance', 'collect_fee'];

/**
 * Stops a settlement that has sent nothing, for a settle request whose answer cannot wait any longer
 * (docs/decisions.md, "A pending settle answer has a hash"): it ends `failed`, nobody charged, its payment
 * released, and the worker can never send anything of it afterwards — the stop and the worker's claim to
 * send (SettlementStore.claimSend, or a batch storing its item) lock the same row, so one of the two wins.
 */
export class UnsentSettlementStop {
  constructor(
    private readonly settlements: Pick<SettlementStore, 'findWithVerification' | 'transition'>,
    private readonly outbox: Pick<WebhookOutbox, 'enqueue' | 'row'>,
  ) {}

  /**
   * The settlement, final: stopped now (`stoppedNow`), or found final already. Null when it cannot be stopped:
   * the worker claimed it for sending (its transaction exists or is about to), or it is past the states that send nothing.
   */
  async stop(settlementId: string, reason: string): Promise<{ settlement: Settlement; stoppedNow: boolean } | null> {
    // the worker may move it between our read and our write (pending -> check_allowance -> collect_fee): read again
    for (let tries = 0; tries < STOPPABLE_STATES.length + 1; tries++) {
      const settlement = await this.settlements.findWithVerification(settlementId);
      if (!settlement) return null;
      if (isFinal(settlement.state)) return { settlement, stoppedNow: false };
      if (settlement.sendClaimedAt || !STOPPABLE_STATES.includes(settlement.state) || paidElsewhereConfirming(settlement)) return null;
      const ending = failed(settlementDoomed(reason, { stopped_by: 'settle_request', stopped_in: settlement.state }), true);
      const moved = await transitionWithFinalEvent(
        this.settlements,
        this.outbox,
        { id: settlementId, from: settlement.state, to: 'failed', data: ending.data, note: { ...ending.note, stopped_by: 'settle_request' }, onlyUnclaimed: true },
        settlement.verification.webhookUrl,
      );
      if (moved) return { settlement: moved, stoppedNow: true };
    }
    return null;
  }
}

/**
 * Someone else's transaction already paid its merchant, and it waits only for that transaction's confirmations
 * (execution_confirming): it is paid, not unsent, so it is never stopped; the request is held for its outcome.
 */
export function paidElsewhereConfirming(settlement: Pick<Settlement, 'waitingReason'>): boolean {
  return settlement.waitingReason === SettlementWaitReason.ExecutionConfirming;
}
