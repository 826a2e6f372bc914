import { loadConfig } from './config';
import { ConfigError } from './config-error';

const TREASURY = '0x' + '11'.repeat(32);
const base = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/test',
  TREASURY_PRIVATE_KEY: TREASURY,
  WEBHOOK_SECRET: 'whsec_test',
  RPC_URL_84532: 'http://127.0.0.1:8545',
};

function failure(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig(base);
    expect(config).toMatchObject({
      nodeEnv: 'development',
      redisUrl: 'redis://127.0.0.1:6379',
      queuePrefix: 'x402',
      port: 4020,
      host: '0.0.0.0',
      logLevel: 'info',
      feeAmount: 10_000n,
      apiKeys: [],
    });
    expect(config.networks).toEqual([
      {
        chainId: 84532,
        caip2: 'eip155:84532',
        legacyName: 'layer2-sepolia',
        rpcUrl: 'http://127.0.0.1:8545',
        tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
        eip712Name: undefined,
        eip712Version: undefined,
        confirmations: 1,
      },
    ]);
    // the treasury key also relays when no relayer keys are given
    expect(config.relayers).toEqual([config.treasury]);
    expect(config.treasury.address).toBe('0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a');
  });

  it('enables a network only when its RPC URL is set', () => {
    const config = loadConfig({ ...base, RPC_URL_8453: 'https://mainnet.base.org', CONFIRMATIONS_8453: '3' });
    expect(config.networks.map((n) => [n.chainId, n.confirmations])).toEqual([
      [8453, 3],
      [84532, 1],
    ]);
  });

  it.each([
    [{ TREASURY_PRIVATE_KEY: '0x12' }, 'TREASURY_PRIVATE_KEY must be a 32-byte hex private key'],
    [{ TREASURY_PRIVATE_KEY: undefined }, 'TREASURY_PRIVATE_KEY is required but not set'],
    [{ TREASURY_PRIVATE_KEY: '0x' + '00'.repeat(32) }, 'TREASURY_PRIVATE_KEY is not a valid secp256k1 private key'],
    [{ DATABASE_URL: undefined }, 'DATABASE_URL is required but not set'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must be a postgres or postgresql URL'],
    [{ REDIS_URL: 'nope' }, 'REDIS_URL is not a valid URL'],
    [{ PORT: '70000' }, 'PORT must be between 0 and 65535 (got 70000)'],
    [{ PORT: 'eighty' }, 'PORT must be a whole number (got "eighty")'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of error, warn, info, http, verbose, debug, silly (got "loud")'],
    [{ RPC_URL_84532: 'ftp://x' }, 'RPC_URL_84532 must be a http or https URL'],
    [{ RPC_URL_84532: undefined }, 'RPC_URL_8453 / RPC_URL_84532 must be set for at least one network'],
    [{ TOKEN_ADDRESS_84532: '0x1234' }, 'TOKEN_ADDRESS_84532 must be a 20-byte 0x-prefixed hex address'],
    [{ CONFIRMATIONS_84532: '0' }, 'CONFIRMATIONS_84532 must be between 1 and 100 (got 0)'],
    [{ RELAYER_PRIVATE_KEYS: `${TREASURY},0xbad` }, 'RELAYER_PRIVATE_KEYS entry 2 must be a 32-byte hex private key'],
    [{ FEE_AMOUNT: '0.01' }, 'FEE_AMOUNT must be a whole number of smallest token units (got "0.01")'],
    [{ WEBHOOK_SECRET: '' }, 'WEBHOOK_SECRET is required but not set'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV must be one of development, production, test (got "staging")'],
    [{ QUEUE_PREFIX: 'a b' }, 'QUEUE_PREFIX may only contain'],
  ])('%j fails naming the variable', (override, message) => {
    const error = failure({ ...base, ...override });
    expect(error.message.startsWith(message)).toBe(true);
  });

  it('never echoes a private key in its error', () => {
    const bad = '0x' + 'zz'.repeat(32);
    expect(failure({ ...base, TREASURY_PRIVATE_KEY: bad }).message).not.toContain('zz');
  });
});
