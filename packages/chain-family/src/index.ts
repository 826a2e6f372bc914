// @facilitator/chain-family: the seam between the layers that settle payments and the chains they settle on.
// A family (EVM in evm-chain, Solana in svm-chain) implements these; the apps register the families they serve
// and open every network through its family.
export type { AddressRules, ChainFamily, FamilyKeyKind } from './chain-family';
export type { FamilyNetwork, FamilyNetworkReads, FamilyTransactionStatus } from './family-network';
export { ChainFamilies } from './chain-families';
