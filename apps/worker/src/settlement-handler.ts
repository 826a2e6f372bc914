import type { Job } from 'bullmq';
import type { Logger } from '@facilitator/logging';
import type { SettlementJobData } from '@facilitator/queue';
import { UnknownSettlementError, type SettlementMachine } from '@facilitator/settlement';
import { UnrecoverableError } from 'bullmq';
import type { JobHandler } from './job-catalog';

/** Retry delays for a settlement job whose step threw (RPC or database unavailable): 0.5 s doubling to 30 s. */
export function settlementBackoff(attemptsMade: number): number {
  return Math.min(500 * 2 ** Math.max(0, attemptsMade - 1), 30_000);
}

export function settlementHandler(machine: SettlementMachine, logger: Logger, concurrency: number): JobHandler {
  return {
    concurrency,
    backoff: settlementBackoff,
    async process(job: Job) {
      const { settlementId } = job.data as SettlementJobData;
      try {
        const state = await machine.advance(settlementId);
        return { state };
      } catch (err) {
        if (err instanceof UnknownSettlementError) throw new UnrecoverableError(err.message);
        logger.warn('settlement step failed; will retry', { settlementId, attempt: job.attemptsMade + 1, err: (err as Error).message });
        throw err;
      }
    },
  };
}
