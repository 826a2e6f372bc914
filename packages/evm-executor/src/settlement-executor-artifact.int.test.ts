// A compile check (solc-js): in the int tier, not the unit tier, which a developer runs after every change.
import { compileExecutor, SOLC_VERSION } from './testing/compile-executor';
import { SETTLEMENT_EXECUTOR_ARTIFACT } from './settlement-executor-artifact';

describe('the committed settlement executor', () => {
  it(`is what contracts/SettlementExecutor.sol compiles to with solc ${SOLC_VERSION}`, () => {
    const compiled = compileExecutor();
    expect(SETTLEMENT_EXECUTOR_ARTIFACT.compiler).toBe(compiled.compiler);
    expect(SETTLEMENT_EXECUTOR_ARTIFACT.bytecode).toBe(compiled.bytecode);
    expect(SETTLEMENT_EXECUTOR_ARTIFACT.deployedBytecode).toBe(compiled.deployedBytecode);
    expect(SETTLEMENT_EXECUTOR_ARTIFACT.immutableRanges).toEqual(compiled.immutableRanges);
    expect(SETTLEMENT_EXECUTOR_ARTIFACT.abi).toEqual(compiled.abi);
  });
});
