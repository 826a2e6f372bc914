import { FailoverJsonRpcProvider, JsonRpcError, RpcCallTimeoutError, RpcEndpointPool, UsdcClient, type RpcCaller } from '@facilitator/evm-chain';
import { toQuantity } from 'ethers';
import { RpcWalletDeploymentGuard } from './wallet-deployment-guard';

const CHAIN = 84532;
const TOKEN = '0x' + '0c'.repeat(20);
const RELAYER = '0x' + 'a1'.repeat(20);
const PROBE = { factory: '0x' + 'fa'.repeat(20), factoryCalldata: '0x1234', wallet: '0x' + 'ee'.repeat(20), token: TOKEN, transferCalldata: '0xabcd' };
const TX = { gasLimit: 1_500_000n, maxFeePerGasCap: 100_000_000_000n };

/** One endpoint that answers the market's reads and answers the probe as `probe` says, recording how each call came. */
class Endpoint implements RpcCaller {
  readonly batched: string[] = [];
  readonly alone: Array<{ method: string; params: unknown[] }> = [];
  constructor(private readonly probe: () => Promise<unknown>) {}
  async call<T>(method: string): Promise<T> {
    this.batched.push(method);
    if (method === 'eth_getBlockByNumber') return { baseFeePerGas: '0x3b9aca00' } as T; // 1 gwei
    if (method === 'eth_maxPriorityFeePerGas') return '0x5f5e100' as T; // 0.1 gwei
    if (method === 'eth_blockNumber') return '0x1' as T;
    return (await this.probe()) as T;
  }
  async callAlone<T>(method: string, params: unknown[]): Promise<T> {
    this.alone.push({ method, params });
    return (await this.probe()) as T;
  }
  destroy(): void {}
}

function guardOver(probe: () => Promise<unknown>) {
  const endpoints: Endpoint[] = [];
  const pool = new RpcEndpointPool(CHAIN, ['http://one.invalid', 'http://two.invalid'], { callTimeoutMs: 50 }, () => {
    const endpoint = new Endpoint(probe);
    endpoints.push(endpoint);
    return endpoint;
  });
  const usdc = new UsdcClient(new FailoverJsonRpcProvider(pool), TOKEN);
  const limits = { perMerchant: 5, perFactory: 50, failedProbesPerWallet: 2, windowMs: 60_000 };
  const repository = { reserve: jest.fn(), release: jest.fn(), probeAllowance: jest.fn(), recordFailedProbe: jest.fn() };
  return { guard: new RpcWalletDeploymentGuard(new Map([[CHAIN, usdc]]), repository, limits), pool, endpoints };
}

describe("the deploy-then-transfer probe runs a stranger's code (issue 40, 4)", () => {
  it('alone on the wire, with the real transaction gas limit and fee fields', async () => {
    const answer = '0x' + (250_000).toString(16).padStart(64, '0') + (90_000).toString(16).padStart(64, '0');
    const { guard, endpoints } = guardOver(async () => answer);
    expect(await guard.simulateDeployment(CHAIN, RELAYER, PROBE, TX)).toEqual({ deployGas: 250_000n, transferGas: 90_000n });
    const [first] = endpoints;
    expect(first.batched).not.toContain('eth_call');
    expect(first.alone).toHaveLength(1);
    const [tx, block] = first.alone[0].params as [Record<string, string>, string];
    expect(first.alone[0].method).toBe('eth_call');
    expect(block).toBe('pending');
    expect(tx).toMatchObject({ from: RELAYER, gas: toQuantity(TX.gasLimit), maxFeePerGas: toQuantity(2_100_000_000n), maxPriorityFeePerGas: toQuantity(100_000_000n) });
    expect(tx.to).toBeUndefined();
  });

  it('judged on no endpoint: a revert, an out of gas or a slow answer is the wallet refused, both endpoints stay up', async () => {
    const outcomes: Array<() => Promise<unknown>> = [
      async () => {
        throw new JsonRpcError('execution reverted', 3, '0x');
      },
      async () => {
        throw new JsonRpcError('out of gas', -32000);
      },
      // what the batch client throws when its call's own timeout passes: the wallet's initializer burning time
      async () => {
        throw new RpcCallTimeoutError('one.invalid', 50);
      },
    ];
    for (const probe of outcomes) {
      const { guard, pool } = guardOver(probe);
      const simulation = await guard.simulateDeployment(CHAIN, RELAYER, PROBE, TX);
      expect(simulation).toMatchObject({ stage: expect.any(String), reason: expect.any(String) });
      expect(pool.snapshot().map((e) => [e.up, e.failed])).toEqual([
        [true, 0],
        [true, 0],
      ]);
    }
  });
});
