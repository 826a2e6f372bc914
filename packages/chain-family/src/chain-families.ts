import { familyOfNetworkId, type ChainFamilyId } from '@facilitator/core';
import type { ChainFamily } from './chain-family';

// what any family's open() takes and gives: the registry only finds families, the caller narrows by id
type AnyFamily = ChainFamily<never>;

/**
 * The families a process serves, found by id or by a network's CAIP-2 namespace. An app registers the families
 * it composes (EVM always; Solana where configured) and finds each network's family here, never by a
 * namespace test of its own.
 */
export class ChainFamilies {
  private readonly byId = new Map<ChainFamilyId, AnyFamily>();

  constructor(families: readonly AnyFamily[]) {
    for (const family of families) {
      if (this.byId.has(family.id)) throw new Error(`chain family ${family.id} is registered twice`);
      // the namespace the family answers to is the one core's list gives its id: one spelling of each
      const owner = familyOfNetworkId(`${family.caipNamespace}:x`);
      if (owner !== family.id) throw new Error(`chain family ${family.id} claims namespace ${family.caipNamespace}, which core gives to ${owner ?? 'no family'}`);
      this.byId.set(family.id, family);
    }
  }

  get ids(): ChainFamilyId[] {
    return [...this.byId.keys()];
  }

  byFamilyId(id: ChainFamilyId): AnyFamily | undefined {
    return this.byId.get(id);
  }

  /** the family of a CAIP-2 network id, undefined where no registered family has its namespace */
  ofNetwork(networkId: string): AnyFamily | undefined {
    const id = familyOfNetworkId(networkId);
    return id && this.byId.get(id);
  }
}
