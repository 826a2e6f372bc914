// Compile checks: solc-js compiles Permit2 (via-IR, about half a minute) and the x402 proxies' test doubles.
// In the int tier, not the unit tier, which a developer runs after every change (docs/development.md).
import { compilePermit2, PERMIT2_SOLC_VERSION } from '../testing/compile-permit2';
import { compileX402Proxies, PROXIES_SOLC_VERSION } from '../testing/compile-x402-proxies';
import { X402_PROXIES_ARTIFACT } from './x402-proxies-artifact';
import { PERMIT2_ARTIFACT } from './permit2-artifact';

describe('the committed test doubles of the x402 proxies', () => {
  it(`are what contracts/X402Permit2Proxies.sol compiles to with solc ${PROXIES_SOLC_VERSION}`, () => {
    expect(X402_PROXIES_ARTIFACT).toEqual(compileX402Proxies());
  });
});

describe('the committed Permit2 code', () => {
  it(`is what the npm-shipped source compiles to with solc ${PERMIT2_SOLC_VERSION} and Permit2's own settings`, () => {
    const compiled = compilePermit2();
    expect(PERMIT2_ARTIFACT).toEqual(compiled);
  });
});
