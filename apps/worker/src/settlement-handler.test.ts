import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { RpcUnavailableError } from '@facilitator/evm-sending';
import { createSilentLogger } from '@facilitator/logging';
import {
  SettlementAwaitingChainError,
  SettlementWaitingError,
  SettlementWaitReason,
  UnknownSettlementError,
  type SettlementMachine,
} from '@facilitator/settlement';
import { settlementBackoff, settlementHandler } from './settlement-handler';

/** A machine whose advance fails as told, recording what the handler asked of it. */
function fakeMachine(advance: () => Promise<string>, giveUp: 'parked' | 'failed' = 'failed') {
  const calls = { advance: 0, giveUp: [] as Array<{ id: string; errorClass: string }> };
  const machine = {
    advance: async () => {
      calls.advance++;
      return advance();
    },
    giveUp: async (id: string, _err: unknown, errorClass: string) => {
      calls.giveUp.push({ id, errorClass });
      return giveUp;
    },
  } as unknown as SettlementMachine;
  return { machine, calls };
}

const job = (attemptsMade: number) => ({ data: { settlementId: 'stl_1' }, attemptsMade }) as unknown as Job;
const options = { logger: createSilentLogger(), concurrency: 1, maxAttempts: 3 };
/** lets the promise callbacks the handler left behind run */
const afterCallbacks = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('settlementHandler', () => {
  it('returns the state the machine reached', async () => {
    const { machine } = fakeMachine(async () => 'settled');
    await expect(settlementHandler({ ...options, machine }).process(job(0))).resolves.toEqual({ state: 'settled' });
  });

  it('delays the job of a settlement waiting for the chain, counting no attempt and never giving up', async () => {
    const { machine, calls } = fakeMachine(async () => {
      throw new SettlementWaitingError('stl_1', SettlementWaitReason.GasAboveCap, 2_000);
    });
    const delays: Array<{ until: number; token?: string }> = [];
    const waitingJob = { ...job(options.maxAttempts - 1), moveToDelayed: async (until: number, token?: string) => void delays.push({ until, token }) } as unknown as Job;
    const before = Date.now();
    await expect(settlementHandler({ ...options, machine }).process(waitingJob, 'lock-token')).rejects.toBeInstanceOf(DelayedError);
    expect(delays).toHaveLength(1);
    expect(delays[0].token).toBe('lock-token');
    expect(delays[0].until).toBeGreaterThanOrEqual(before + 2_000);
    expect(delays[0].until).toBeLessThanOrEqual(Date.now() + 2_000);
    expect(calls.giveUp).toEqual([]);
  });

  it('gives up the slot of a settlement awaiting its transaction, and runs it again as soon as the outcome is known', async () => {
    let outcomeKnown!: () => void;
    const known = new Promise<void>((resolve) => (outcomeKnown = resolve));
    const { machine, calls } = fakeMachine(async () => {
      throw new SettlementAwaitingChainError('stl_1', 'tx_1', 10_000, known);
    });
    const moves: string[] = [];
    let delayed = false;
    const awaitingJob = {
      ...job(options.maxAttempts - 1),
      moveToDelayed: async (until: number, token?: string) => {
        delayed = true;
        moves.push(`delayed ${until - Date.now() > 9_000 ? '~10s' : 'too short'} ${token}`);
      },
      promote: async () => {
        if (!delayed) throw new Error('Job is not in the delayed state');
        delayed = false;
        moves.push('promoted');
      },
      isDelayed: async () => delayed,
    } as unknown as Job;
    await expect(settlementHandler({ ...options, machine }).process(awaitingJob, 'lock-token')).rejects.toBeInstanceOf(DelayedError);
    expect(moves).toEqual(['delayed ~10s lock-token']);
    await afterCallbacks();
    expect(moves).toEqual(['delayed ~10s lock-token']);
    outcomeKnown();
    await afterCallbacks();
    expect(moves).toEqual(['delayed ~10s lock-token', 'promoted']);
    // no attempt counted, never given up
    expect(calls.giveUp).toEqual([]);
  });

  it('leaves alone a job that already left the delayed set when its outcome becomes known', async () => {
    const { machine } = fakeMachine(async () => {
      throw new SettlementAwaitingChainError('stl_1', 'tx_1', 10_000, Promise.resolve());
    });
    const warnings: string[] = [];
    const logger = { ...createSilentLogger(), warn: (message: string) => void warnings.push(message) };
    let promoted = 0;
    const takenJob = {
      ...job(0),
      moveToDelayed: async () => undefined,
      promote: async () => {
        promoted++;
        throw new Error('Job is not in the delayed state');
      },
      isDelayed: async () => false,
    } as unknown as Job;
    await expect(settlementHandler({ ...options, logger: logger as never, machine }).process(takenJob, 'lock-token')).rejects.toBeInstanceOf(DelayedError);
    await afterCallbacks();
    expect(promoted).toBe(1);
    expect(warnings).toEqual([]);
  });

  it('retries a transient error until the last attempt, then gives up', async () => {
    const { machine, calls } = fakeMachine(async () => {
      throw new RpcUnavailableError(84532, 'down');
    });
    const handler = settlementHandler({ ...options, machine });
    await expect(handler.process(job(0))).rejects.toBeInstanceOf(RpcUnavailableError);
    await expect(handler.process(job(1))).rejects.toBeInstanceOf(RpcUnavailableError);
    expect(calls.giveUp).toEqual([]);
    await expect(handler.process(job(2))).resolves.toEqual({ state: 'failed' });
    expect(calls.giveUp).toEqual([{ id: 'stl_1', errorClass: 'transient' }]);
  });

  it('gives up at once on a permanent error', async () => {
    const { machine, calls } = fakeMachine(async () => {
      throw new Error('broken invariant');
    });
    await expect(settlementHandler({ ...options, machine }).process(job(0))).resolves.toEqual({ state: 'failed' });
    expect(calls.giveUp).toEqual([{ id: 'stl_1', errorClass: 'permanent' }]);
  });

  it('fails the job for good, visibly, when the settlement is parked', async () => {
    const { machine } = fakeMachine(async () => {
      throw new Error('broken invariant');
    }, 'parked');
    await expect(settlementHandler({ ...options, machine }).process(job(0))).rejects.toThrow(/parked for an operator/);
    await expect(settlementHandler({ ...options, machine }).process(job(0))).rejects.toBeInstanceOf(UnrecoverableError);
  });

  it('never retries a job naming no settlement', async () => {
    const { machine, calls } = fakeMachine(async () => {
      throw new UnknownSettlementError('no settlement stl_1');
    });
    await expect(settlementHandler({ ...options, machine }).process(job(0))).rejects.toBeInstanceOf(UnrecoverableError);
    expect(calls.giveUp).toEqual([]);
  });

  it('backs off from 0.5 s, doubling, to at most 30 s', () => {
    expect([1, 2, 3, 4, 7, 20].map(settlementBackoff)).toEqual([500, 1000, 2000, 4000, 30_000, 30_000]);
  });
});
