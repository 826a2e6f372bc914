import { hasExecutorItem } from './atomic/executor-item';
import { termsOf } from './payment';
import { failed, settlementDoomed } from './failures';
import type { StepContext } from './step';
import type { StepResult, StepWait } from './step-outcome';
import { SettlementWaitReason } from './wait-reasons';

/**
 * Thrown by the machine after it recorded the wait: the job is to be delayed (not failed, and no attempt
 * counted) and run again after `retryAfterMs`.
 */
export class SettlementWaitingError extends Error {
  constructor(
    readonly settlementId: string,
    readonly reason: SettlementWaitReason,
    readonly retryAfterMs: number,
  ) {
    super(`settlement ${settlementId} waits: ${reason}`);
    this.name = 'SettlementWaitingError';
  }
}

/**
 * Before a new transaction is sent: a wait when the network's base fee is above our cap (whatever we
 * signed would sit unmined, holding a nonce of its key). Transactions already sent are left to the
 * provider, which keeps them and bumps them within the cap.
 */
export async function waitForGas(ctx: StepContext): Promise<StepWait | undefined> {
  const fee = await ctx.chain.transactions.networkFee(ctx.network.chainId);
  if (!fee.aboveCap) return undefined;
  return {
    wait: {
      reason: SettlementWaitReason.GasAboveCap,
      detail: { base_fee_per_gas: fee.baseFeePerGas.toString(), max_fee_per_gas_cap: fee.maxFeePerGasCap.toString() },
    },
  };
}

/** A relayer with gas for the next transaction, or the wait when every relayer is under its minimum. */
export async function fundedRelayer(ctx: StepContext): Promise<string | StepWait> {
  return (await ctx.signers.nextRelayer()) ?? noFundedRelayer(ctx);
}

/** Before the fee: the wait when no relayer could send the transfer that follows it. */
export async function waitForRelayers(ctx: StepContext): Promise<StepWait | undefined> {
  return (await ctx.signers.anyFundedRelayer()) ? undefined : noFundedRelayer(ctx);
}

/** The wait for a relayer with gas (nothing was sent). */
export function noFundedRelayer(ctx: StepContext): StepWait {
  return { wait: { reason: SettlementWaitReason.NoFundedRelayer, detail: { relayers: ctx.signers.relayers.length } } };
}

/**
 * A settlement that would take the sequential path in a worker without the treasury's key: a payment smaller
 * than the fee, or one the executor cannot run (no executor item: see hasExecutorItem), fails at once (only the
 * sequential path settles it; nothing was charged), one whose own fee the executor cannot take waits for a
 * worker that can charge it, any other waits for the network's atomic path; both waits last only as long
 * as the authorization. Undefined: the path can run here.
 */
export function sequentialPathUnavailable(ctx: StepContext, path: 'atomic' | 'sequential'): StepResult | StepWait | undefined {
  if (path === 'atomic' || ctx.signers.treasurySigns) return undefined;
  if (!hasExecutorItem(ctx)) {
    return failed(
      settlementDoomed(`a payment of ${ctx.settlement.mechanism} settles only on the sequential path, which this deployment does not run (no treasury key in the worker)`, {
        mechanism: ctx.settlement.mechanism,
        path: 'sequential',
      }),
      true,
    );
  }
  const validBefore = termsOf(ctx.settlement).validBefore.toString();
  // an upto amount below the fee is charged none, which the executor cannot do: it always takes its fee
  if (ctx.policy.feeAmount === 0n) {
    return failed(
      settlementDoomed('a settlement charged no fee settles only on the sequential path, which this deployment does not run (no treasury key in the worker)', {
        amount: ctx.settlement.amount,
        fee_amount: '0',
        path: 'sequential',
      }),
      true,
    );
  }
  if (BigInt(ctx.settlement.amount) < ctx.policy.feeAmount) {
    return failed(
      settlementDoomed('a payment smaller than the fee settles only on the sequential path, which this deployment does not run (no treasury key in the worker)', {
        amount: ctx.settlement.amount,
        fee_amount: ctx.policy.feeAmount.toString(),
        path: 'sequential',
      }),
      true,
    );
  }
  const feeDiffers = ctx.policy.networkPath === 'atomic' && ctx.policy.feeAmount !== ctx.policy.executorFee;
  if (!authorizationStillValid(ctx)) {
    const reason = feeDiffers
      ? "authorization expired while no worker could charge the settlement's fee: the executor takes another fee and this worker holds no treasury key"
      : 'authorization expired while the atomic path was not set up on this network';
    return failed(settlementDoomed(reason, { validBefore, path: 'sequential', ...(feeDiffers ? feeDetail(ctx) : {}) }), true);
  }
  if (feeDiffers) return { wait: { reason: SettlementWaitReason.FeeDiffersFromExecutor, detail: { network: ctx.network.caip2, ...feeDetail(ctx) } } };
  return { wait: { reason: SettlementWaitReason.AtomicPathNotReady, detail: { network: ctx.network.caip2, treasury: ctx.signers.treasury } } };
}

const feeDetail = (ctx: StepContext) => ({ fee_amount: ctx.policy.feeAmount.toString(), executor_fee: ctx.policy.executorFee.toString() });

/** Whether the payer's authorization is still valid for the expiry margin (a wait must not outlive it). */
export function authorizationStillValid(ctx: StepContext): boolean {
  return termsOf(ctx.settlement).validBefore > BigInt(ctx.policy.now() + ctx.policy.expiryMarginSeconds);
}
