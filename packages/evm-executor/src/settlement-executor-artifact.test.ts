// The compile check (solc-js) is in settlement-executor-artifact.int.test.ts, out of the unit tier.
import { delegateOf, isEarlierExecutorCode, isExecutorCode } from './executor-code';
import { SETTLEMENT_EXECUTOR_V1_ARTIFACT } from './testing/settlement-executor-v1-artifact';
import { SETTLEMENT_EXECUTOR_ARTIFACT } from './settlement-executor-artifact';

describe('delegateOf', () => {
  it('reads the delegate of an EIP-7702 designator, and nothing else', () => {
    const delegate = '0x' + 'ab'.repeat(20);
    expect(delegateOf('0xef0100' + 'AB'.repeat(20))).toBe(delegate);
    expect(delegateOf('0x')).toBeUndefined();
    expect(delegateOf('0xef0100' + 'ab'.repeat(19))).toBeUndefined();
    expect(delegateOf('0x6080' + 'ab'.repeat(21))).toBeUndefined();
  });
});

describe('the committed settlement executor', () => {
  it('recognises its runtime code whatever the immutables hold, and nothing else', () => {
    const code = SETTLEMENT_EXECUTOR_ARTIFACT.deployedBytecode;
    const filled = [...code.slice(2)];
    for (const { start, length } of SETTLEMENT_EXECUTOR_ARTIFACT.immutableRanges) {
      for (let i = start * 2; i < (start + length) * 2; i++) filled[i] = 'a';
    }
    expect(isExecutorCode('0x' + filled.join(''))).toBe(true);
    // one byte changed outside the immutables: another contract
    const outside = SETTLEMENT_EXECUTOR_ARTIFACT.immutableRanges[0].start - 1;
    const altered = [...filled];
    altered[outside * 2] = altered[outside * 2] === 'f' ? '0' : 'f';
    expect(isExecutorCode('0x' + altered.join(''))).toBe(false);
    expect(isExecutorCode(code + '00')).toBe(false);
    expect(isExecutorCode('0x')).toBe(false);
  });

  it('is not the first executor, which is recognised whatever its immutables hold', () => {
    const fill = (artifact: { deployedBytecode: string; immutableRanges: ReadonlyArray<{ start: number; length: number }> }) => {
      const filled = [...artifact.deployedBytecode.slice(2)];
      for (const { start, length } of artifact.immutableRanges) for (let i = start * 2; i < (start + length) * 2; i++) filled[i] = 'c';
      return '0x' + filled.join('');
    };
    expect(isEarlierExecutorCode(fill(SETTLEMENT_EXECUTOR_V1_ARTIFACT))).toBe(true);
    expect(isExecutorCode(fill(SETTLEMENT_EXECUTOR_V1_ARTIFACT))).toBe(false);
    expect(isEarlierExecutorCode(fill(SETTLEMENT_EXECUTOR_ARTIFACT))).toBe(false);
    expect(isEarlierExecutorCode(SETTLEMENT_EXECUTOR_V1_ARTIFACT.deployedBytecode + '00')).toBe(false);
  });
});
