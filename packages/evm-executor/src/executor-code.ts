import { keccak256 } from 'ethers';
import { SETTLEMENT_EXECUTOR_ARTIFACT } from './settlement-executor-artifact';

/** The EIP-7702 delegation designator: 0xef0100 followed by the delegate's address. */
const DELEGATION_PREFIX = '0xef0100';

/** The address an account's code delegates to (EIP-7702), or undefined when it does not delegate. */
export function delegateOf(code: string): string | undefined {
  const lower = code.toLowerCase();
  if (lower.length !== DELEGATION_PREFIX.length + 40 || !lower.startsWith(DELEGATION_PREFIX)) return undefined;
  return '0x' + lower.slice(DELEGATION_PREFIX.length);
}

interface ImmutableRange {
  start: number;
  length: number;
}

/** Runtime code (lowercase hex, no 0x) with zeros where the constructor wrote immutables. */
function withoutImmutables(code: string, ranges: readonly ImmutableRange[]): string {
  const hex = code.toLowerCase().replace(/^0x/, '');
  let cleared = '';
  let cursor = 0;
  for (const { start, length } of ranges) {
    if ((start + length) * 2 > hex.length) return hex;
    cleared += hex.slice(cursor * 2, start * 2) + '00'.repeat(length);
    cursor = start + length;
  }
  return cleared + hex.slice(cursor * 2);
}

/**
 * Whether deployed code is the committed executor: equal to the compiled runtime code everywhere except
 * the immutables (token, proxies, treasury, fee, relayers), which the caller checks through the executor's views.
 */
export function isExecutorCode(code: string): boolean {
  const expected = SETTLEMENT_EXECUTOR_ARTIFACT.deployedBytecode.slice(2);
  const actual = code.toLowerCase().replace(/^0x/, '');
  return actual.length === expected.length && withoutImmutables(actual, SETTLEMENT_EXECUTOR_ARTIFACT.immutableRanges) === expected;
}

/**
 * The first executor (EIP-3009 items only, `Item(from, to, value, validAfter, validBefore, nonce, signature,
 * gas)`; commit 0b43c93's artifact): recognised only to tell an operator that a treasury still delegating to
 * it needs `executor setup` again. It is never called: its item is not the current one.
 */
const EXECUTOR_V1 = {
  codeHash: '0xeaf29d651a3d7b81013f626c563a2c5897fcedcaf8e933cc0c55cb7ee1e0d77b',
  size: 3792,
  immutableStarts: [
    237, 376, 441, 492, 560, 639, 708, 749, 1000, 1299, 1364, 1423, 1483, 1543, 1603, 1663, 1723, 1783, 1845, 1948, 2060, 2523, 2570, 2617, 2664, 2711,
    2758, 2805, 2844,
  ],
} as const;

/** Whether deployed code is the first executor, whatever its immutables hold. */
export function isEarlierExecutorCode(code: string): boolean {
  const hex = code.toLowerCase().replace(/^0x/, '');
  if (hex.length !== EXECUTOR_V1.size * 2) return false;
  const ranges = EXECUTOR_V1.immutableStarts.map((start) => ({ start, length: 32 }));
  return keccak256('0x' + withoutImmutables(hex, ranges)) === EXECUTOR_V1.codeHash;
}
