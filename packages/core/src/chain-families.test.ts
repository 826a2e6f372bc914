import { evmNetworkId, familyOfNetworkId } from './chain-families';
import { NETWORKS } from './networks';

describe('chain families', () => {
  it("reads a network id's family from its CAIP-2 namespace", () => {
    expect(familyOfNetworkId('eip155:8453')).toBe('evm');
    expect(familyOfNetworkId('eip155:84532')).toBe('evm');
    expect(familyOfNetworkId('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp')).toBe('svm');
    expect(familyOfNetworkId('solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1')).toBe('svm');
    // a namespace no family has, and text that is no CAIP-2 id
    expect(familyOfNetworkId('stellar:pubnet')).toBeUndefined();
    expect(familyOfNetworkId('eip155')).toBeUndefined();
    expect(familyOfNetworkId('base')).toBeUndefined();
  });

  it('gives every registry network the family its id names', () => {
    for (const network of NETWORKS) expect(familyOfNetworkId(network.caip2)).toBe(network.family);
  });

  it('spells an EVM chain id as its CAIP-2 id, the one the registry gives it', () => {
    expect(evmNetworkId(8453)).toBe('eip155:8453');
    for (const network of NETWORKS) if (network.family === 'evm') expect(evmNetworkId(network.chainId)).toBe(network.caip2);
  });
});
