import type { SettlementWaitReasonId } from '@facilitator/core';
import { hasExecutorItem } from './atomic/executor-item';
import { termsOf } from './payment';
import { failed, settlementDoomed } from './failures';
import type { StepContext, StepResult } from './step';
import type { StepAwait } from './awaiting-chain';

/** Why a settlement waits in its state instead of going on (shown on its status record). */
export const SettlementWaitReason = {
  /** the network's base fee is above MAX_FEE_PER_GAS_GWEI_<chainId>: nothing we sign could be included */
  GasAboveCap: 'gas_price_above_cap',
  /** every relayer's native balance is under RELAYER_MIN_BALANCE_<chainId>: none can pay for a transfer */
  NoFundedRelayer: 'no_funded_relayer',
  /**
   * the payer's other settlements in flight already use its balance (or, for a contract-wallet payer, its
   * turn): this one would fit alone, so it waits for them instead of being sent against money it may not have
   */
  PayerFundsInFlight: 'payer_funds_in_flight',
  /**
   * the merchant's allowance (or balance) covers this fee alone but not on top of its other fees in flight: it
   * waits for them (a fee already taken on chain still counts until its settlement records it)
   */
  MerchantFeesInFlight: 'merchant_fees_in_flight',
  /** a delegated (EIP-7702) treasury has a transaction unmined: geth-family pools hold one at a time */
  TreasuryBusy: 'treasury_busy',
  /**
   * the network's atomic path is not set up (no delegation, or one to another configuration) and this worker
   * holds no treasury key to settle sequentially: it waits for `executor setup`, within its authorization
   */
  AtomicPathNotReady: 'atomic_path_not_ready',
  /**
   * the settlement's own fee (stored when it was created) is not the fee this worker's executor takes, and
   * this worker holds no treasury key to charge it sequentially: it waits for a worker that can charge
   * exactly that fee (during a change of FEE_AMOUNT, one still configured with it), within its authorization
   */
  FeeDiffersFromExecutor: 'fee_differs_from_executor',
  /**
   * another transaction than ours executed the payment to the merchant (a front-run, the payer's wallet sending
   * it twice, a merchant failing over between facilitators): the settlement is settled on it once it has the
   * confirmations ours would need (CONFIRMATIONS_<chainId>), never at fewer
   */
  ExecutionConfirming: 'execution_confirming',
} as const;
export type SettlementWaitReason = (typeof SettlementWaitReason)[keyof typeof SettlementWaitReason];

// held to core's one list of wait reasons (the schema, metrics and status page read that one): a reason named
// here and not there, or there and not here, does not compile
const NO_REASON_UNLISTED: [Exclude<SettlementWaitReason, SettlementWaitReasonId>] extends [never] ? true : never = true;
const NO_REASON_UNNAMED: [Exclude<SettlementWaitReasonId, SettlementWaitReason>] extends [never] ? true : never = true;
void [NO_REASON_UNLISTED, NO_REASON_UNNAMED];

/** How long a waiting settlement's job stays delayed before it looks again. */
export const WAIT_RETRY_MS: Record<SettlementWaitReason, number> = {
  gas_price_above_cap: 2_000,
  no_funded_relayer: 5_000,
  payer_funds_in_flight: 1_000,
  merchant_fees_in_flight: 1_000,
  treasury_busy: 1_000,
  // the delegation is read again every EXECUTOR_RECHECK_MS (a minute by default)
  atomic_path_not_ready: 10_000,
  fee_differs_from_executor: 10_000,
  execution_confirming: 1_000,
};

/** A step's answer when the chain does not let the settlement go on yet; nothing was sent. */
export interface StepWait {
  wait: { reason: SettlementWaitReason; detail: Record<string, unknown> };
}

export function isWait(result: StepResult | StepWait | StepAwait): result is StepWait {
  return 'wait' in result;
}

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
  const fee = await ctx.transactions.networkFee(ctx.network.chainId);
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
  return (await ctx.nextRelayer()) ?? noFundedRelayer(ctx);
}

/** Before the fee: the wait when no relayer could send the transfer that follows it. */
export async function waitForRelayers(ctx: StepContext): Promise<StepWait | undefined> {
  return (await ctx.anyFundedRelayer()) ? undefined : noFundedRelayer(ctx);
}

/** The wait for a relayer with gas (nothing was sent). */
export function noFundedRelayer(ctx: StepContext): StepWait {
  return { wait: { reason: SettlementWaitReason.NoFundedRelayer, detail: { relayers: ctx.relayers.length } } };
}

/**
 * A settlement that would take the sequential path in a worker without the treasury's key: a payment smaller
 * than the fee, or one the executor cannot run (no executor item: see hasExecutorItem), fails at once (only the
 * sequential path settles it; nothing was charged), one whose own fee the executor cannot take waits for a
 * worker that can charge it, any other waits for the network's atomic path; both waits last only as long
 * as the authorization. Undefined: the path can run here.
 */
export function sequentialPathUnavailable(ctx: StepContext, path: 'atomic' | 'sequential'): StepResult | StepWait | undefined {
  if (path === 'atomic' || ctx.treasurySigns) return undefined;
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
  if (ctx.feeAmount === 0n) {
    return failed(
      settlementDoomed('a settlement charged no fee settles only on the sequential path, which this deployment does not run (no treasury key in the worker)', {
        amount: ctx.settlement.amount,
        fee_amount: '0',
        path: 'sequential',
      }),
      true,
    );
  }
  if (BigInt(ctx.settlement.amount) < ctx.feeAmount) {
    return failed(
      settlementDoomed('a payment smaller than the fee settles only on the sequential path, which this deployment does not run (no treasury key in the worker)', {
        amount: ctx.settlement.amount,
        fee_amount: ctx.feeAmount.toString(),
        path: 'sequential',
      }),
      true,
    );
  }
  const feeDiffers = ctx.networkPath === 'atomic' && ctx.feeAmount !== ctx.executorFee;
  if (!authorizationStillValid(ctx)) {
    const reason = feeDiffers
      ? "authorization expired while no worker could charge the settlement's fee: the executor takes another fee and this worker holds no treasury key"
      : 'authorization expired while the atomic path was not set up on this network';
    return failed(settlementDoomed(reason, { validBefore, path: 'sequential', ...(feeDiffers ? feeDetail(ctx) : {}) }), true);
  }
  if (feeDiffers) return { wait: { reason: SettlementWaitReason.FeeDiffersFromExecutor, detail: { network: ctx.network.caip2, ...feeDetail(ctx) } } };
  return { wait: { reason: SettlementWaitReason.AtomicPathNotReady, detail: { network: ctx.network.caip2, treasury: ctx.treasury } } };
}

const feeDetail = (ctx: StepContext) => ({ fee_amount: ctx.feeAmount.toString(), executor_fee: ctx.executorFee.toString() });

/** Whether the payer's authorization is still valid for the expiry margin (a wait must not outlive it). */
export function authorizationStillValid(ctx: StepContext): boolean {
  return termsOf(ctx.settlement).validBefore > BigInt(ctx.now() + ctx.expiryMarginSeconds);
}
