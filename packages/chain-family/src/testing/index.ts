// @facilitator/chain-family/testing: the contract suites every chain family and every network it opens pass.
export { chainFamilyContract, type ChainFamilySamples } from './chain-family-contract';
export { familyNetworkContract, type FamilyNetworkUnderTest } from './family-network-contract';
