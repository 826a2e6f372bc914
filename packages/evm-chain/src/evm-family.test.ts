import { chainFamilyContract } from '@facilitator/chain-family/testing';
import { evmChainFamily } from './evm-family';

chainFamilyContract(evmChainFamily, {
  addresses: ['0x036CbD53842c5426634e7929541eC2318f3dCF7e', '0x0000000000000000000000000000000000000001', '0xffffffffffffffffffffffffffffffffffffffff'],
  sameAddress: [['0x036CbD53842c5426634e7929541eC2318f3dCF7e', '0x036cbd53842c5426634e7929541ec2318f3dcf7e']],
  notAddresses: ['', '0x', '0x036cbd53842c5426634e7929541ec2318f3dcf7', '036cbd53842c5426634e7929541ec2318f3dcf7e00', '0x036cbd53842c5426634e7929541ec2318f3dcf7g', '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU'],
  networkId: 'eip155:84532',
});
