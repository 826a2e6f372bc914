import type { ChainFamilyId } from '@facilitator/core';
import type { FamilyNetwork } from './family-network';

/**
 * How a family spells an address. EVM: 20 bytes as `0x` hex, stored lowercase; Solana: 32 bytes in base58,
 * case-sensitive, stored as written. Every record, payment identity and comparison goes through these, so
 * nothing below the HTTP shell lowercases a Solana address or compares EVM addresses by case.
 */
export interface AddressRules {
  /** the address in the family's stored spelling, or undefined when `raw` is not one of its addresses */
  normalize(raw: string): string | undefined;
  /** whether two addresses name the same account (both must be addresses of the family) */
  same(a: string, b: string): boolean;
}

/** The curve a family's keys sign with: the signer port opens a key of this kind for the family's networks. */
export type FamilyKeyKind = 'secp256k1' | 'ed25519';

/**
 * A chain family: what every network of one kind of chain shares. A family is found from a network's CAIP-2
 * namespace (`eip155`, `solana`) and opens each of its networks from that network's settings; the apps build
 * every network through its family, so what is one family's (its RPC, its token reads, its transaction ids)
 * stays behind the family's network and the layers above name only the family's id.
 *
 * `Settings` is what the family reads from the configuration for one network; `Network` is what it opens.
 */
export interface ChainFamily<Settings = never, Network extends FamilyNetwork = FamilyNetwork> {
  readonly id: ChainFamilyId;
  /** its CAIP-2 namespace: `eip155:8453` is EVM's, `solana:5eykt4Us…` Solana's */
  readonly caipNamespace: string;
  readonly keyKind: FamilyKeyKind;
  readonly addresses: AddressRules;
  /** opens one of the family's networks; nothing is read from the chain until a read is asked for */
  open(settings: Settings): Network;
}
