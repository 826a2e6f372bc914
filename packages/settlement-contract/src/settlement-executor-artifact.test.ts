import { compileExecutor, SOLC_VERSION } from './testing/compile-executor';
import { isExecutorCode } from './executor-code';
import { SETTLEMENT_EXECUTOR_ARTIFACT } from './settlement-executor-artifact';

describe('the committed settlement executor', () => {
  const compiled = compileExecutor();

  it(`is what contracts/SettlementExecutor.sol compiles to with solc ${SOLC_VERSION}`, () => {
    expect(SETTLEMENT_EXECUTOR_ARTIFACT.compiler).toBe(compiled.compiler);
    expect(SETTLEMENT_EXECUTOR_ARTIFACT.bytecode).toBe(compiled.bytecode);
    expect(SETTLEMENT_EXECUTOR_ARTIFACT.deployedBytecode).toBe(compiled.deployedBytecode);
    expect(SETTLEMENT_EXECUTOR_ARTIFACT.immutableRanges).toEqual(compiled.immutableRanges);
    expect(SETTLEMENT_EXECUTOR_ARTIFACT.abi).toEqual(compiled.abi);
  });

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
});
