import { resolveChainSettings, resolveNetwork, resolveTreasury, settlementsCovered } from './chain-context';
import { formatDelta, formatToken, parseAddress, redactUrl } from './format';

describe('amounts and addresses', () => {
  it.each([
    [0n, '0.00 USDC'],
    [10_000n, '0.01 USDC'],
    [1_234_567n, '1.234567 USDC'],
    [1_000_000_000n, '1000.00 USDC'],
  ])('formats %s units as %s, never rounded', (units, text) => {
    expect(formatToken(units, 6, 'USDC')).toBe(text);
  });

  it('signs deltas', () => {
    expect(formatDelta(-1_000_000n, 6, 'USDC')).toBe('-1.00 USDC');
    expect(formatDelta(990_000n, 6, 'USDC')).toBe('+0.99 USDC');
  });

  it('hides what may carry an API key in an RPC URL', () => {
    expect(redactUrl('https://base-sepolia.g.alchemy.com/v2/abcdef')).toBe('https://base-sepolia.g.alchemy.com/…');
    expect(redactUrl('http://127.0.0.1:8545')).toBe('http://127.0.0.1:8545');
    expect(redactUrl('https://user:pw@rpc.example')).toBe('https://rpc.example/…');
  });

  it('checksums addresses and names the flag when one is wrong', () => {
    expect(parseAddress('--merchant', '0x6cf15a51599aef5e6d42de0fc181aa5a1b0e8961')).toBe('0x6CF15a51599aEf5e6d42dE0fC181Aa5a1B0E8961');
    expect(() => parseAddress('--merchant', 'merchant')).toThrow('--merchant must be a 0x-prefixed 20-byte hex address (got "merchant")');
  });

  it('counts the settlements an allowance and a balance pay the fee for', () => {
    expect(settlementsCovered(70_000n, 50_000n, 10_000n)).toEqual({ byAllowance: 7n, byBalance: 5n, covered: 5n });
  });
});

describe('chain settings from the service variables', () => {
  it('accepts CAIP-2 ids, short names and chain ids', () => {
    for (const name of ['eip155:84532', 'base-sepolia', 'layer2-sepolia', '84532']) expect(resolveNetwork(name).chainId).toBe(84532);
    expect(resolveNetwork('base').chainId).toBe(8453);
    expect(() => resolveNetwork('ethereum')).toThrow('unknown network "ethereum"');
  });

  it('reads RPC_URL_, TOKEN_ADDRESS_, CONFIRMATIONS_ and FEE_AMOUNT; --rpc-url wins; the public RPC otherwise', () => {
    const env = { RPC_URL_84532: 'http://127.0.0.1:8545', TOKEN_ADDRESS_84532: '0x' + 'ab'.repeat(20), CONFIRMATIONS_84532: '3', FEE_AMOUNT: '5000' };
    expect(resolveChainSettings({ network: 'base-sepolia' }, env)).toMatchObject({
      rpcUrl: 'http://127.0.0.1:8545',
      rpcSource: 'RPC_URL_84532',
      tokenAddress: '0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB',
      confirmations: 3,
      feeAmount: 5000n,
    });
    expect(resolveChainSettings({ network: 'base-sepolia', rpcUrl: 'https://rpc.example' }, env).rpcUrl).toBe('https://rpc.example');
    expect(resolveChainSettings({ network: 'base' }, {})).toMatchObject({
      rpcUrl: 'https://mainnet.base.org',
      tokenAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      feeAmount: 10_000n,
      confirmations: 1,
    });
  });

  it('needs none of the service secrets, and finds the treasury without our key', () => {
    expect(() => resolveChainSettings({ network: 'eip155:84532' }, {})).not.toThrow();
    expect(resolveTreasury(undefined, { TREASURY_ADDRESS: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' })).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    // beside the service: derived from its key
    expect(resolveTreasury(undefined, { TREASURY_PRIVATE_KEY: '0x' + '11'.repeat(32) })).toBe('0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A');
    expect(resolveTreasury('0x70997970c51812dc3a010c7d01b50e0d17dc79c8', { TREASURY_ADDRESS: '0x' + '00'.repeat(20) })).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    expect(() => resolveTreasury(undefined, {})).toThrow('the treasury address is not known');
  });
});
