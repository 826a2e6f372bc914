import { evmChainFamily } from '@facilitator/evm-chain';
import { ServiceUnavailableError } from '@facilitator/core';
import { FeeAllowances } from './fee-allowance';

describe('FeeAllowances', () => {
  it('a node that cannot be reached is a 503 naming the network, not a 500', async () => {
    // port 1 on loopback refuses at once: no endpoint answers
    const network = evmChainFamily.open({ chainId: 84532, caip2: 'eip155:84532', rpcUrls: ['http://127.0.0.1:1'], rpcTimeoutMs: 1_000, tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e' });
    try {
      const allowances = new FeeAllowances([network], '0x' + '70'.repeat(20), 10_000n);
      const failure = await allowances.of('0x' + 'aa'.repeat(20)).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(ServiceUnavailableError);
      expect(failure).toMatchObject({ status: 503, message: expect.stringContaining('eip155:84532'), details: { network: 'eip155:84532', dependency: 'rpc' } });
    } finally {
      network.close();
    }
  });
});
