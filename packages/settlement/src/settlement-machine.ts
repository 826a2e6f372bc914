import type { TransactionProvider } from '@facilitator/chain';
import type { Settlement, SettlementRepository, SettlementState } from '@facilitator/db';
import { webhookEventRow, type WebhookOutbox } from '@facilitator/webhooks';
import { finalSettlementEvent } from './settlement-events';
import { canTransition, isFinal } from './states';
import type { SettlementNetwork, StepContext, StepResult } from './step';
import { STEPS } from './steps';

export interface SettlementMachineOptions {
  settlements: SettlementRepository;
  networks: ReadonlyMap<number, SettlementNetwork>;
  transactions: TransactionProvider;
  treasury: string;
  relayers: readonly string[];
  feeAmount: bigint;
  expiryMarginSeconds: number;
  outbox: WebhookOutbox;
  now?: () => number;
  onTransition?: (event: SettlementTransitionEvent) => void;
}

export interface SettlementTransitionEvent {
  settlementId: string;
  /** the settlement as it was before this transition */
  settlement: Settlement;
  from: SettlementState;
  to: SettlementState;
  note?: Record<string, unknown>;
}

/** Thrown when a job names a settlement that does not exist; retrying cannot help. */
export class UnknownSettlementError extends Error {}

/**
 * Advances a settlement through the spec's state machine until it is final. Each step's outcome is
 * persisted (state, fields, history row, and the final webhook event) before the next step runs, so a
 * crash at any moment resumes from the last persisted state; steps are idempotent against the chain.
 */
export class SettlementMachine {
  private relayerTurn = 0;

  constructor(private readonly options: SettlementMachineOptions) {}

  async advance(settlementId: string): Promise<SettlementState> {
    let settlement = await this.load(settlementId);
    for (;;) {
      if (isFinal(settlement.state)) return settlement.state;
      const state = settlement.state as keyof typeof STEPS;
      const result = await STEPS[state](this.context(settlement));
      if (!canTransition(state, result.to)) throw new Error(`illegal settlement transition ${state} -> ${result.to}`);
      const moved = await this.persist(settlement, state, result);
      // null: another worker advanced it meanwhile, so what we hold is stale
      settlement = moved ? { ...moved, verification: settlement.verification } : await this.load(settlementId);
    }
  }

  private async load(settlementId: string): Promise<StepContext['settlement']> {
    const settlement = await this.options.settlements.findWithVerification(settlementId);
    if (!settlement) throw new UnknownSettlementError(`no settlement ${settlementId}`);
    return settlement;
  }

  private async persist(settlement: StepContext['settlement'], from: SettlementState, result: StepResult): Promise<Settlement | null> {
    const webhookUrl = settlement.verification.webhookUrl;
    let eventId: string | undefined;
    const moved = await this.options.settlements.transition({
      id: settlement.id,
      from,
      to: result.to,
      data: result.data,
      note: result.note,
      // only a final state with a webhook URL writes more than the one transition statement
      event:
        isFinal(result.to) && webhookUrl
          ? (row) => {
              const event = webhookEventRow(finalSettlementEvent(row, webhookUrl));
              eventId = event.id;
              return event;
            }
          : undefined,
    });
    if (!moved) return null;
    this.options.onTransition?.({ settlementId: settlement.id, settlement, from, to: result.to, note: result.note });
    // after commit; a failure here leaves a pending event row that the webhook sweeper enqueues
    if (eventId) await this.options.outbox.enqueue(eventId).catch(() => undefined);
    return moved;
  }

  private context(settlement: StepContext['settlement']): StepContext {
    const network = this.options.networks.get(settlement.chainId);
    if (!network) throw new Error(`settlement ${settlement.id} is on chain ${settlement.chainId}, which is not enabled`);
    const { relayers } = this.options;
    return {
      settlement,
      network,
      transactions: this.options.transactions,
      relayers,
      nextRelayer: () => relayers[this.relayerTurn++ % relayers.length],
      treasury: this.options.treasury,
      feeAmount: this.options.feeAmount,
      expiryMarginSeconds: this.options.expiryMarginSeconds,
      now: this.options.now ?? (() => Math.floor(Date.now() / 1000)),
    };
  }
}
