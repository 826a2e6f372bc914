import { AbiCoder, getAddress, id, keccak256, toBeHex, type JsonRpcProvider } from 'ethers';
import { PERMIT2_ARTIFACT } from './permit2-artifact';
import { X402_PROXIES_ARTIFACT } from './x402-proxies-artifact';

/** Permit2's address on every chain it is deployed to (CREATE2, the same everywhere): where x402 clients sign for it. */
export const PERMIT2_ADDRESS = getAddress('0x000000000022d473030f116ddee9f6b43ac78ba3');

/** x402's Permit2 proxies, at the addresses @x402/evm signs for (CREATE2, the same on every chain). */
export const X402_EXACT_PERMIT2_PROXY = getAddress('0x402085c248eea27d92e8b30b2c58ed07f9e20001');
export const X402_UPTO_PERMIT2_PROXY = getAddress('0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002');

/** Permit2's EIP-712 domain separator on `chainId` at its canonical address (EIP712.sol: name "Permit2", no version). */
export function permit2DomainSeparator(chainId: number): string {
  const typeHash = id('EIP712Domain(string name,uint256 chainId,address verifyingContract)');
  return keccak256(AbiCoder.defaultAbiCoder().encode(['bytes32', 'bytes32', 'uint256', 'address'], [typeHash, id('Permit2'), chainId, PERMIT2_ADDRESS]));
}

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
  fill(PERMIT2_ARTIFACT.immutables.cachedDomainSeparator, permit2DomainSeparator(chainId));
  return '0x' + code.join('');
}

/**
 * Places Permit2 and x402's two Permit2 proxies (our test doubles of them, contracts/X402Permit2Proxies.sol)
 * at their canonical addresses on an anvil chain (anvil_setCode), as they are on the chains x402 serves.
 */
export async function installPermit2(provider: JsonRpcProvider, chainId: number): Promise<void> {
  await Promise.all([
    provider.send('anvil_setCode', [PERMIT2_ADDRESS, permit2RuntimeCode(chainId)]),
    provider.send('anvil_setCode', [X402_EXACT_PERMIT2_PROXY, X402_PROXIES_ARTIFACT.exact]),
    provider.send('anvil_setCode', [X402_UPTO_PERMIT2_PROXY, X402_PROXIES_ARTIFACT.upto]),
  ]);
}
