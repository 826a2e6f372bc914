// What the layers above expect of any chain family, run against each family (EVM, Solana) in the unit tier: a
// family passes these or the registry must not take it.
import { CHAIN_FAMILIES } from '@facilitator/core';
import type { ChainFamily } from '../chain-family';
import { ChainFamilies } from '../chain-families';
import type { FamilyNetwork } from '../family-network';

export interface ChainFamilySamples {
  /** addresses of the family, in any spelling it accepts */
  addresses: string[];
  /** pairs of spellings of one address (EVM: case); empty where the family has one spelling */
  sameAddress: Array<[string, string]>;
  /** text that is no address of the family (another family's addresses among them) */
  notAddresses: string[];
  /** a network id of the family */
  networkId: string;
}

export function chainFamilyContract(family: ChainFamily<never, FamilyNetwork>, samples: ChainFamilySamples): void {
  describe(`chain family ${family.id}: the family contract`, () => {
    it("answers to core's namespace for its id, and the registry finds it by a network's id", () => {
      expect(CHAIN_FAMILIES[family.id].caipNamespace).toBe(family.caipNamespace);
      const registry = new ChainFamilies([family]);
      expect(registry.ofNetwork(samples.networkId)).toBe(family);
      expect(registry.byFamilyId(family.id)).toBe(family);
      expect(() => new ChainFamilies([family, family])).toThrow(/twice/);
    });

    it('names the kind of key its transactions are signed with', () => {
      expect(['secp256k1', 'ed25519']).toContain(family.keyKind);
    });

    it('stores one spelling of each address: normalizing is idempotent and keeps the address the same account', () => {
      expect(samples.addresses.length).toBeGreaterThan(1);
      for (const raw of samples.addresses) {
        const stored = family.addresses.normalize(raw);
        expect(stored).toBeDefined();
        expect(family.addresses.normalize(stored!)).toBe(stored);
        expect(family.addresses.same(raw, stored!)).toBe(true);
      }
      const stored = samples.addresses.map((raw) => family.addresses.normalize(raw));
      expect(new Set(stored).size).toBe(samples.addresses.length);
      expect(family.addresses.same(samples.addresses[0], samples.addresses[1])).toBe(false);
    });

    it('reads two spellings of one address as one', () => {
      for (const [a, b] of samples.sameAddress) {
        expect(family.addresses.same(a, b)).toBe(true);
        expect(family.addresses.normalize(a)).toBe(family.addresses.normalize(b));
      }
    });

    it('refuses what is not its address', () => {
      expect(samples.notAddresses.length).toBeGreaterThan(0);
      for (const raw of samples.notAddresses) expect(family.addresses.normalize(raw)).toBeUndefined();
    });
  });
}
