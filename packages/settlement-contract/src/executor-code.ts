import { SETTLEMENT_EXECUTOR_ARTIFACT } from './settlement-executor-artifact';

/** The EIP-7702 delegation designator: 0xef0100 followed by the delegate's address. */
const DELEGATION_PREFIX = '0xef0100';

/** The address an account's code delegates to (EIP-7702), or undefined when it does not delegate. */
export function delegateOf(code: string): string | undefined {
  const lower = code.toLowerCase();
  if (lower.length !== DELEGATION_PREFIX.length + 40 || !lower.startsWith(DELEGATION_PREFIX)) return undefined;
  return '0x' + lower.slice(DELEGATION_PREFIX.length);
}

/**
 * Whether deployed code is the committed executor: equal to the compiled runtime code everywhere except
 * the immutables (token, treasury, fee, relayers), which the caller checks through the executor's views.
 */
export function isExecutorCode(code: string): boolean {
  const expected = SETTLEMENT_EXECUTOR_ARTIFACT.deployedBytecode.slice(2);
  const actual = code.toLowerCase().replace(/^0x/, '');
  if (actual.length !== expected.length) return false;
  let cursor = 0;
  for (const { start, length } of SETTLEMENT_EXECUTOR_ARTIFACT.immutableRanges) {
    if (actual.slice(cursor * 2, start * 2) !== expected.slice(cursor * 2, start * 2)) return false;
    cursor = start + length;
  }
  return actual.slice(cursor * 2) === expected.slice(cursor * 2);
}
