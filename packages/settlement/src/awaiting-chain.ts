import type { PendingOutcome } from './outcome-waits';
import type { StepResult } from './step';
import type { StepWait } from './waiting';

/**
 * A step's answer when a transaction it sent (or found sent) has no outcome yet: the settlement stays in its
 * state, nothing is recorded, and its job gives up its slot until the outcome is known (no job holds a slot
 * while it waits for a block).
 */
export interface StepAwait {
  awaiting: PendingOutcome;
}

export function isAwait(result: StepResult | StepWait | StepAwait): result is StepAwait {
  return 'awaiting' in result;
}

/** Whether the step leaves the settlement in its state (a wait for the chain, or a transaction's outcome). */
export function staysInState(result: StepResult | StepWait | StepAwait): result is StepWait | StepAwait {
  return 'wait' in result || 'awaiting' in result;
}

/**
 * Thrown by the machine when a step awaits a transaction's outcome: the job is delayed (not failed, no
 * attempt counted) for at most `retryAfterMs`, and run again as soon as `known` resolves in this process.
 * The delay is the fallback for a process that dies meanwhile: any worker then takes the job up and waits anew.
 */
export class SettlementAwaitingChainError extends Error {
  constructor(
    readonly settlementId: string,
    readonly transactionId: string,
    readonly retryAfterMs: number,
    readonly known: Promise<void>,
  ) {
    super(`settlement ${settlementId} awaits the outcome of transaction ${transactionId}`);
    this.name = 'SettlementAwaitingChainError';
  }
}
