import { ErrorCode, InvalidRequestError, NotFoundError } from '@facilitator/core';
import type { Settlement, SettlementStore } from '@facilitator/db';
import { enqueueSettlement, SettlementJobPriority, type Queues } from '@facilitator/queue';
import type { WebhookOutbox } from '@facilitator/webhooks';
import { transitionWithFinalEvent } from './final-transition';
import { operatorCanResolve } from './states';

interface ResolveRequest {
  /** what the operator found on chain */
  outcome: 'settled' | 'failed';
  /** why, for the history and the merchant (e.g. "transfer 0xabc… confirmed in block 123") */
  note: string;
  /** the transfer that paid the merchant, when outcome is settled */
  txHash?: string;
}

/**
 * What an operator can do with a settlement parked for attention (its job gave up with the money state
 * unknown): run it again once the cause is fixed, or, having looked at the chain, resolve it by hand.
 */
export class OperatorActions {
  constructor(
    private readonly settlements: SettlementStore,
    private readonly queues: Pick<Queues, 'settlement'>,
    private readonly outbox: WebhookOutbox,
  ) {}

  async retry(id: string): Promise<Settlement> {
    const settlement = await this.parked(id);
    await this.settlements.clearAttention(id);
    const job = await this.queues.settlement.getJob(id);
    if (job && (await job.isFailed())) await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    else {
      await job?.remove().catch(() => undefined);
      await enqueueSettlement(this.queues, id, SettlementJobPriority.Resumed);
    }
    return settlement;
  }

  async resolve(id: string, request: ResolveRequest): Promise<Settlement> {
    const settlement = await this.parked(id);
    if (!operatorCanResolve(settlement.state, request.outcome)) {
      throw new InvalidRequestError(`a settlement in ${settlement.state} cannot be resolved as ${request.outcome}`, {
        errors: [{ path: '/outcome', message: `not reachable from ${settlement.state}` }],
      });
    }
    const full = (await this.settlements.findWithVerification(id))!;
    const data =
      request.outcome === 'settled'
        ? { settledAt: new Date(), merchantPaid: true, ...(request.txHash ? { settlementTxHash: request.txHash } : {}) }
        : {
            errorCode: ErrorCode.SettlementFailed,
            errorMessage: `settlement failed: resolved by an operator: ${request.note}`,
            errorDetails: { reason: 'resolved by an operator', note: request.note, fee_tx_hash: settlement.feeTxHash },
          };
    const moved = await transitionWithFinalEvent(
      this.settlements,
      this.outbox,
      { id, from: settlement.state, to: request.outcome, data, note: { resolved_by: 'operator', note: request.note } },
      full.verification.webhookUrl,
    );
    if (!moved) throw new InvalidRequestError('the settlement moved meanwhile; read it again', { errors: [] });
    await this.settlements.clearAttention(id);
    return (await this.settlements.findById(id))!;
  }

  private async parked(id: string): Promise<Settlement> {
    const settlement = await this.settlements.findById(id);
    if (!settlement) throw new NotFoundError(`no settlement with id ${JSON.stringify(id)}`);
    if (!settlement.attentionAt) {
      throw new InvalidRequestError('only a settlement parked for an operator can be retried or resolved here', {
        errors: [{ path: '', message: `settlement is ${settlement.state} and not parked` }],
      });
    }
    return settlement;
  }
}
