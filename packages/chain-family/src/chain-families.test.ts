import { ChainFamilies } from './chain-families';
import type { ChainFamily } from './chain-family';

const family = (id: 'evm' | 'svm', caipNamespace: string): ChainFamily =>
  ({ id, caipNamespace, keyKind: 'secp256k1', addresses: { normalize: (raw) => raw, same: (a, b) => a === b }, open: () => { throw new Error('not opened here'); } });

describe('ChainFamilies', () => {
  it("finds a network's family by its CAIP-2 namespace, and none for a family not registered", () => {
    const evm = family('evm', 'eip155');
    const registry = new ChainFamilies([evm]);
    expect(registry.ofNetwork('eip155:8453')).toBe(evm);
    expect(registry.ofNetwork('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp')).toBeUndefined();
    expect(registry.ofNetwork('base')).toBeUndefined();
    expect(registry.ids).toEqual(['evm']);
  });

  it("refuses a family that claims another family's namespace, or one registered twice", () => {
    expect(() => new ChainFamilies([family('svm', 'eip155')])).toThrow(/core gives to evm/);
    expect(() => new ChainFamilies([family('evm', 'evm')])).toThrow(/no family/);
    expect(() => new ChainFamilies([family('evm', 'eip155'), family('evm', 'eip155')])).toThrow(/twice/);
  });
});
