import { executorTargets, type DirectCall, type MechanismNetwork } from '@facilitator/payment-mechanisms';
import type { ExecutorItem } from '@facilitator/evm-executor';
import { directCallOf, mechanismNetworkOf } from '../payment';
import type { StepContext } from '../step';

/**
 * A payment's direct call (`directCallOf`: for the settlement's amount) as an executor item's call, when the
 * executor may make it. Undefined when it may not: a target other than the contracts the mechanisms name
 * for the executor on `network` (`executorTargets`: its token and proxies; it refuses any other), or a call only
 * another account may send (a payment naming its sender, e.g. the witness's facilitator, while the executor's
 * calls come from the treasury's address).
 */
export function executorCallOf(call: DirectCall, network: MechanismNetwork, treasury: string): DirectCall | undefined {
  if (!lowercaseTargets(network).has(call.to.toLowerCase())) return undefined;
  if (call.sender !== undefined && call.sender.toLowerCase() !== treasury.toLowerCase()) return undefined;
  return call;
}

/** the executor's targets on `network`, lowercase: kept per targets object (`executorTargets` keeps one per network) */
function lowercaseTargets(network: MechanismNetwork): ReadonlySet<string> {
  const targets = executorTargets(network);
  let lowercase = LOWERCASE_TARGETS.get(targets);
  if (!lowercase) {
    lowercase = new Set(Object.values(targets).map((a) => a.toLowerCase()));
    LOWERCASE_TARGETS.set(targets, lowercase);
  }
  return lowercase;
}
const LOWERCASE_TARGETS = new WeakMap<Readonly<Record<string, string>>, ReadonlySet<string>>();

/** with the payer's approval permit or without, the call goes to the same target from the same sender */
function itemCallOf(ctx: StepContext, withPermit = false): DirectCall | undefined {
  return executorCallOf(directCallOf(ctx.settlement, ctx.network.usdc, withPermit), mechanismNetworkOf(ctx), ctx.signers.treasury);
}

/**
 * Whether the settlement executor can run the payment: its direct call goes to a contract the executor
 * holds (`executorCallOf`), from any sender or the treasury; any other takes the sequential path.
 */
export function hasExecutorItem(ctx: StepContext): boolean {
  return itemCallOf(ctx) !== undefined;
}

/**
 * The payment as an item of the executor, given the fee's and its transfer's gas; undefined when it has none.
 * The merchant pays the fee and must receive the settlement's amount from the call; the payer and the nonce
 * (bytes32 in every mechanism's terms) name the item's event. `withPermit`: the call sends the payer's
 * approval permit first (x402's proxies' settleWithPermit, which the executor allows).
 */
export function executorItemOf(ctx: StepContext, gas: bigint, withPermit = false): ExecutorItem | undefined {
  const call = itemCallOf(ctx, withPermit);
  if (!call) return undefined;
  const { settlement } = ctx;
  return { payer: settlement.payer, merchant: settlement.merchant, amount: BigInt(settlement.amount), nonce: settlement.nonce, target: call.to, data: call.data, gas };
}
