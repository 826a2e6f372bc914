// The compile checks (solc-js compiling Permit2 and the proxies) are in permit2-artifact.int.test.ts: they
// take half a minute, too long for the unit tier.
import { bytesToHex } from '@facilitator/core';
import { permit2DomainSeparator } from '@facilitator/payment-mechanisms';
import { permit2RuntimeCode } from './install-permit2';
import { PERMIT2_ARTIFACT } from './permit2-artifact';

describe('the committed Permit2 code', () => {
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
