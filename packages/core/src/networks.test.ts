import { getAddress } from 'ethers';
import { NETWORKS, networkByAnyName, networkByX402V1Name } from './networks';

describe('the network registry', () => {
  it('names every network once, in every naming, and every USDC address is checksummed', () => {
    const names = NETWORKS.flatMap((n) => [n.caip2, ...n.legacyAliases]);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(NETWORKS.map((n) => n.chainId)).size).toBe(NETWORKS.length);
    for (const n of NETWORKS) {
      expect(n.caip2).toBe(`eip155:${n.chainId}`);
      expect(n.usdc.address).toBe(getAddress(n.usdc.address));
      expect(n.legacyAliases).toContain(n.legacyName);
      if (n.x402V1Name) expect(networkByX402V1Name(n.x402V1Name)).toBe(n);
    }
    expect(networkByAnyName('layer2-sepolia')?.chainId).toBe(84532);
    expect(networkByX402V1Name('arbitrum')).toBeUndefined();
  });

  it('gives each family its own defaults (finality, fee cap, relayer minimum, gas)', () => {
    const defaults = Object.fromEntries(
      NETWORKS.map((n) => [n.label, [n.finalityDepth, n.maxFeePerGasGwei, n.relayerMinBalance, n.gasCaps.transfer, n.batchGasBudget]]),
    );
    expect(defaults).toEqual({
      Base: [10, 100, 10n ** 15n, 150_000n, 6_000_000n],
      'Base Sepolia': [10, 100, 10n ** 15n, 150_000n, 6_000_000n],
      'Polygon PoS': [64, 3_000, 10n ** 18n, 150_000n, 6_000_000n],
      'Polygon Amoy': [64, 3_000, 10n ** 18n, 150_000n, 6_000_000n],
      'Arbitrum One': [10, 100, 10n ** 15n, 1_500_000n, 24_000_000n],
      'Arbitrum Sepolia': [10, 100, 10n ** 15n, 1_500_000n, 24_000_000n],
      'Avalanche C-Chain': [1, 1_000, 10n ** 16n, 150_000n, 6_000_000n],
      'Avalanche Fuji': [1, 1_000, 10n ** 16n, 150_000n, 6_000_000n],
      'OP Mainnet': [10, 100, 10n ** 15n, 150_000n, 6_000_000n],
      'OP Sepolia': [10, 100, 10n ** 15n, 150_000n, 6_000_000n],
    });
  });
});
