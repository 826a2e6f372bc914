import { chainFamilyContract } from '@facilitator/chain-family/testing';
import { svmAddresses, svmChainFamily } from './svm-family';

chainFamilyContract(svmChainFamily, {
  // devnet USDC, the SPL Token program, the system program
  addresses: ['4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', '11111111111111111111111111111111'],
  // base58 is case-sensitive: no second spelling
  sameAddress: [],
  notAddresses: ['', 'O0Il', '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncD0', '0x036cbd53842c5426634e7929541ec2318f3dcf7e', '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDUx'],
  networkId: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
});

describe('Solana addresses', () => {
  it('are case-sensitive: another spelling of the letters is another account, never lowercased', () => {
    const usdc = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
    const lowered = usdc.toLowerCase();
    expect(svmAddresses.normalize(lowered)).toBe(lowered);
    expect(svmAddresses.same(usdc, lowered)).toBe(false);
  });
});
