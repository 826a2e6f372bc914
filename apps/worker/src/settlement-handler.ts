import type { Logger } from '@facilitator/logging';
import { SettlementJobPriority, type SettlementJobData } from '@facilitator/queue';
import {
  classifySettlementError,
  SettlementAwaitingChainError,
  SettlementWaitingError,
  UnknownSettlementError,
  type SettlementMachine,
} from '@facilitator/settlement';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import type { JobHandler } from './job-catalog';

/** Runs a delayed job now; one that already left the delayed set (its fallback delay ran out) is left alone. */
async function promoteWhenDelayed(job: Job<SettlementJobData>, logger: Logger, settlementId: string): Promise<void> {
  try {
    await job.promote();
  } catch (err) {
    // not delayed any more (taken up already) is expected; anything else costs only the fallback delay
    if (!(await job.isDelayed().catch(() => false))) return;
    logger.warn('could not wake a settlement awaiting its transaction; it runs after its fallback delay', { settlementId, err });
  }
}

/** Retry delays for a settlement job whose step threw transiently (RPC or database unavailable): 0.5 s doubling to 30 s. */
export function settlementBackoff(attemptsMade: number): number {
  return Math.min(500 * 2 ** Math.max(0, attemptsMade - 1), 30_000);
}

export interface SettlementHandlerOptions {
  machine: SettlementMachine;
  logger: Logger;
  concurrency: number;
  /** transient failures in a row before the job gives up (SETTLEMENT_MAX_ATTEMPTS) */
  maxAttempts: number;
  /** settlements run once this resolves (the start-up check of each network's settlement path) */
  ready?: Promise<void>;
  /** told whenever a settlement is parked for an operator */
  onParked?: (settlementId: string) => void;
}

/**
 * Runs a settlement job: advances the state machine. A settlement waiting for the chain (gas above the
 * cap, no relayer with gas) delays its job without counting an attempt. A permanent error gives up at once; transient ones
 * retry with back-off up to `maxAttempts`. Giving up ends the settlement when its money state is known,
 * else parks it for an operator; the job then fails for good (visible, and retryable, in Bull Board).
 */
export function settlementHandler(options: SettlementHandlerOptions): JobHandler<SettlementJobData> {
  const { machine, logger } = options;
  return {
    concurrency: options.concurrency,
    backoff: settlementBackoff,
    async process(job, token) {
      const { settlementId } = job.data;
      await options.ready;
      try {
        const state = await machine.advance(settlementId);
        return { state };
      } catch (err) {
        if (err instanceof UnknownSettlementError) throw new UnrecoverableError(err.message);
        if (err instanceof SettlementWaitingError) {
          // waiting is not failing: the job comes back later, and no attempt is counted against it
          await job.moveToDelayed(Date.now() + err.retryAfterMs, token);
          throw new DelayedError();
        }
        if (err instanceof SettlementAwaitingChainError) {
          // its transaction is sent: the slot goes to other settlements until this process knows the outcome,
          // and the job runs again then (the delay is only the fallback should this process die meanwhile),
          // ahead of every new settlement: what is on chain is recorded before new work is taken
          if (job.priority) await job.changePriority({ priority: SettlementJobPriority.Resumed });
          await job.moveToDelayed(Date.now() + err.retryAfterMs, token);
          void err.known.then(() => promoteWhenDelayed(job, logger, settlementId));
          throw new DelayedError();
        }
        const errorClass = classifySettlementError(err);
        const attempt = job.attemptsMade + 1;
        if (errorClass === 'transient' && attempt < options.maxAttempts) {
          logger.warn('settlement step failed; will retry', { settlementId, attempt, err });
          throw err;
        }
        const outcome = await machine.giveUp(settlementId, err, errorClass);
        if (outcome !== 'parked') {
          logger.warn('settlement ended after an error it cannot recover from', { settlementId, errorClass, attempt, state: outcome, err });
          return { state: outcome };
        }
        logger.error('settlement parked for an operator: money state unknown', { settlementId, errorClass, attempt, err });
        options.onParked?.(settlementId);
        throw new UnrecoverableError(`parked for an operator after ${attempt} attempt(s): ${(err as Error)?.message ?? String(err)}`);
      }
    },
  };
}
