import { bytesToHex } from '@facilitator/core';
import { permit2DomainSeparator, PERMIT2_ADDRESS, X402_EXACT_PERMIT2_PROXY, X402_UPTO_PERMIT2_PROXY } from '@facilitator/payment-mechanisms';
import { toBeHex, type JsonRpcProvider } from 'ethers';
import { PERMIT2_ARTIFACT } from './permit2-artifact';
import { X402_PROXIES_ARTIFACT } from './x402-proxies-artifact';

/**
 * Permit2's runtime code as its constructor would have left it at the canonical address on `chainId`. Its
 * EIP712 caches the chain id and the domain separator of `address(this)` as immutables and uses the cache
 * while the chain id matches, so code placed at an address must carry that address's separator: with any
 * other, every signature made for the real Permit2 would be refused.
 */
export function permit2RuntimeCode(chainId: number): string {
  const code = [...PERMIT2_ARTIFACT.deployedBytecode.slice(2)];
  const fill = (ranges: ReadonlyArray<{ start: number; length: number }>, value: string) => {
    for (const { start, length } of ranges) {
      const hex = value.slice(2).padStart(length * 2, '0');
      code.splice(start * 2, length * 2, ...hex);
    }
  };
  fill(PERMIT2_ARTIFACT.immutables.cachedChainId, toBeHex(chainId, 32));
  fill(PERMIT2_ARTIFACT.immutables.cachedDomainSeparator, bytesToHex(permit2DomainSeparator(chainId)));
  return '0x' + code.join('');
}

/**
 * Places Permit2 and x402's two Permit2 proxies (our test doubles of them, contracts/X402Permit2Proxies.sol)
 * at their canonical addresses on an anvil chain (anvil_setCode), as they are on the chains x402 serves.
 */
export async function installPermit2(provider: JsonRpcProvider, chainId: number): Promise<void> {
  // the proxies' reentrancy status word starts at 1 ("not entered"), as their constructor leaves it
  const notEntered = toBeHex(1, 32);
  await Promise.all([
    provider.send('anvil_setCode', [PERMIT2_ADDRESS, permit2RuntimeCode(chainId)]),
    provider.send('anvil_setCode', [X402_EXACT_PERMIT2_PROXY, X402_PROXIES_ARTIFACT.exact]),
    provider.send('anvil_setCode', [X402_UPTO_PERMIT2_PROXY, X402_PROXIES_ARTIFACT.upto]),
    provider.send('anvil_setStorageAt', [X402_EXACT_PERMIT2_PROXY, toBeHex(0, 32), notEntered]),
    provider.send('anvil_setStorageAt', [X402_UPTO_PERMIT2_PROXY, toBeHex(0, 32), notEntered]),
  ]);
}
