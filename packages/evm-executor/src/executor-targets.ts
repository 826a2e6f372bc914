import { getAddress } from 'ethers';
import { executorInterface } from './executor-calls';

/** The executor's constructor arguments by name (`token_` is `token`), in its order. */
const CONSTRUCTOR_ARGUMENTS = executorInterface.deploy.inputs.map((input) => ({ name: input.name.replace(/_$/, ''), type: input.type }));

/**
 * The executor's immutables naming the contracts an item may call besides the token: its constructor's
 * address arguments other than the token and the treasury, each read back by the view of the same name. The
 * executor knows them by name only; which payment mechanism's call goes to which is the mechanisms' own
 * (`executorTargets` of @facilitator/payment-mechanisms), given by the caller in `ExecutorConfig.targets`.
 */
export const EXECUTOR_TARGET_SLOTS: readonly string[] = CONSTRUCTOR_ARGUMENTS.filter((a) => a.type === 'address' && a.name !== 'token' && a.name !== 'treasury').map((a) => a.name);

/** The configured contract of each of the executor's target slots, checksummed; throws for a slot not configured. */
export function targetsOf(targets: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    EXECUTOR_TARGET_SLOTS.map((slot) => {
      const address = targets[slot];
      if (address === undefined) throw new Error(`the executor's ${slot} is not configured`);
      return [slot, getAddress(address)];
    }),
  );
}

/** The executor's constructor arguments, in its order, from their values by name. */
export function constructorArguments(values: Readonly<Record<string, unknown>>): unknown[] {
  return CONSTRUCTOR_ARGUMENTS.map(({ name }) => {
    if (values[name] === undefined) throw new Error(`the executor's ${name} is not configured`);
    return values[name];
  });
}
