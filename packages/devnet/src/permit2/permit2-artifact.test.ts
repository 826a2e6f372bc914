import { compilePermit2, PERMIT2_SOLC_VERSION } from '../testing/compile-permit2';
import { compileX402Proxies, PROXIES_SOLC_VERSION } from '../testing/compile-x402-proxies';
import { X402_PROXIES_ARTIFACT } from './x402-proxies-artifact';
import { bytesToHex } from '@facilitator/core';
import { permit2DomainSeparator } from '@facilitator/payment-mechanisms';
import { permit2RuntimeCode } from './install-permit2';
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

  it('is placed with the chain id and the canonical address\'s domain separator where its constructor writes them', () => {
    const code = permit2RuntimeCode(8453);
    const at = ({ start, length }: { start: number; length: number }) => '0x' + code.slice(2 + start * 2, 2 + (start + length) * 2);
    expect(PERMIT2_ARTIFACT.immutables.cachedChainId.map(at)).toEqual(['0x' + (8453).toString(16).padStart(64, '0')]);
    expect(PERMIT2_ARTIFACT.immutables.cachedDomainSeparator.map(at)).toEqual([bytesToHex(permit2DomainSeparator(8453))]);
    // nothing else changed, and the separator depends on the chain
    expect(code.length).toBe(PERMIT2_ARTIFACT.deployedBytecode.length);
    expect(bytesToHex(permit2DomainSeparator(84532))).not.toBe(bytesToHex(permit2DomainSeparator(8453)));
  });
});
