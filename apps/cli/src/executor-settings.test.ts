import { Wallet } from 'ethers';
import { executorTargets } from '@facilitator/payment-mechanisms';
import { resolveChainSettings } from './chain-context';
import { resolveExecutorSettings } from './executor-settings';

const TREASURY = new Wallet('0x' + '11'.repeat(32));
const RELAYERS = [new Wallet('0x' + '22'.repeat(32)), new Wallet('0x' + '33'.repeat(32))];
const chain = { RPC_URL_84532: 'http://127.0.0.1:8545', TOKEN_ADDRESS_84532: '0x' + 'ab'.repeat(20) };

function read(env: Record<string, string>) {
  const all = { ...chain, ...env };
  return resolveExecutorSettings(resolveChainSettings({ network: 'base-sepolia' }, all), all);
}

describe('the executor configuration, read as the worker reads it', () => {
  it('takes the relayer keys in order, else RELAYER_ADDRESSES, else the treasury alone', () => {
    const keys = read({ TREASURY_PRIVATE_KEY: TREASURY.privateKey, RELAYER_PRIVATE_KEYS: RELAYERS.map((r) => r.privateKey).join(', '), FEE_AMOUNT: '5000' });
    expect(keys.config).toEqual({
      chainId: 84532,
      token: '0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB',
      // the contracts the executor lets an item call: the payment mechanisms' (the token, x402's Permit2 proxies)
      targets: executorTargets({ chainId: 84532, tokenAddress: '0x' + 'ab'.repeat(20) }),
      treasury: TREASURY.address,
      fee: 5000n,
      relayers: RELAYERS.map((r) => r.address),
    });
    expect(keys.treasuryKey).toBe(TREASURY.privateKey);
    expect(keys.relayerKeys).toEqual(RELAYERS.map((r) => r.privateKey));

    const addresses = read({ TREASURY_ADDRESS: TREASURY.address, RELAYER_ADDRESSES: RELAYERS[1].address.toLowerCase() });
    expect(addresses.config.relayers).toEqual([RELAYERS[1].address]);
    expect(addresses.treasuryKey).toBeUndefined();

    expect(read({ TREASURY_PRIVATE_KEY: TREASURY.privateKey }).config).toMatchObject({ relayers: [TREASURY.address], fee: 10_000n });
  });

  it('refuses variables that disagree, as the service does, and never echoes a key', () => {
    expect(() => read({})).toThrow('the treasury is not known: set TREASURY_PRIVATE_KEY');
    expect(() => read({ TREASURY_PRIVATE_KEY: TREASURY.privateKey, TREASURY_ADDRESS: RELAYERS[0].address })).toThrow('does not match TREASURY_PRIVATE_KEY');
    expect(() => read({ TREASURY_PRIVATE_KEY: TREASURY.privateKey, RELAYER_PRIVATE_KEYS: RELAYERS[0].privateKey, RELAYER_ADDRESSES: RELAYERS[1].address })).toThrow(
      'RELAYER_ADDRESSES does not match RELAYER_PRIVATE_KEYS',
    );
    expect(() => read({ TREASURY_PRIVATE_KEY: TREASURY.privateKey, RELAYER_PRIVATE_KEYS: `${RELAYERS[0].privateKey},0xbad` })).toThrow(
      /^RELAYER_PRIVATE_KEYS entry 2 must be a 32-byte hex private key$/,
    );
    expect(() => read({ TREASURY_PRIVATE_KEY: TREASURY.privateKey, RELAYER_PRIVATE_KEYS: `${RELAYERS[0].privateKey},${RELAYERS[0].privateKey}` })).toThrow('the same key twice');
  });
});
