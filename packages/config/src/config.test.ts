import { loadApiConfig, loadConfig, loadWorkerConfig } from './config';
import { ConfigError } from './config-error';

const TREASURY = '0x' + '11'.repeat(32);
const base = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/test',
  TREASURY_PRIVATE_KEY: TREASURY,
  WEBHOOK_SECRET: 'a-master-secret-of-at-least-32-characters',
  RPC_URL_84532: 'http://127.0.0.1:8545',
};

function failure(env: Record<string, string | undefined>, load: (env: Record<string, string | undefined>) => unknown = loadConfig): ConfigError {
  try {
    load(env);
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
        rpcUrls: ['http://127.0.0.1:8545'],
        rpcTimeoutMs: 3_000,
        walletFactories: ['0x4e1dcf7ad4e460cfd30791ccc4f9c8a4f820ec67', '0x0ba5ed0c6aa8c49038f819e587e2633c4a9f428a'],
        walletImplementations: ['0x41675c099f32341bf84bfc5382af534df5c7461a', '0x29fcb43b46531bca003ddc8fcb67ffe91900c762', '0x000100abaad02f1cfc8bbe32bd5a564817339e72'],
        tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
        eip712Name: undefined,
        eip712Version: undefined,
        confirmations: 1,
        gasCaps: { fee: 100_000n, transfer: 150_000n, contractTransfer: 300_000n, walletDeploy: 500_000n },
        maxFeePerGas: 100_000_000_000n,
        replaceAfterMs: 10_000,
        relayerMinBalance: 1_000_000_000_000_000n,
        finalityDepth: 10,
        batchGasBudget: 6_000_000n,
      },
    ]);
    expect(config.abuse).toMatchObject({ minPaymentAmount: 10_000n, maxSettleWaiters: 2_000 });
    expect(config.walletDeployLimits).toEqual({ perMerchant: 5, perFactory: 50, failedProbesPerWallet: 2, windowMs: 3_600_000 });
    expect(config.retention).toEqual({
      rejectedVerificationsMs: 30 * 86_400_000,
      expiredIdempotencyKeysMs: 86_400_000,
      intervalMs: 3_600_000,
      expiredVerificationsMs: 86_400_000,
      unsettledVerificationsMs: 30 * 86_400_000,
      failedSettlementsMs: 90 * 86_400_000,
      unusedMerchantsMs: 90 * 86_400_000,
    });
    expect(config.worker.settlementAttempts).toBe(12);
    expect(config.worker).toMatchObject({ settlementMode: 'atomic', batchWindowMs: 0 });
    // the treasury key also relays when no relayer keys are given
    expect(config.relayers).toEqual([config.treasury]);
    expect(config.treasury?.address).toBe('0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a');
  });

  it('reads the retention of what strangers can make us store, and refuses a retention of nothing', () => {
    const config = loadConfig({
      ...base,
      RETENTION_EXPIRED_VERIFICATIONS_HOURS: '0',
      RETENTION_UNSETTLED_VERIFICATIONS_DAYS: '7',
      RETENTION_FAILED_SETTLEMENTS_DAYS: '365',
      RETENTION_UNUSED_MERCHANTS_DAYS: '30',
    });
    expect(config.retention).toMatchObject({ expiredVerificationsMs: 0, unsettledVerificationsMs: 7 * 86_400_000, failedSettlementsMs: 365 * 86_400_000, unusedMerchantsMs: 30 * 86_400_000 });
    expect(() => loadConfig({ ...base, RETENTION_FAILED_SETTLEMENTS_DAYS: '0' })).toThrow(/RETENTION_FAILED_SETTLEMENTS_DAYS/);
    expect(() => loadConfig({ ...base, RETENTION_UNUSED_MERCHANTS_DAYS: 'soon' })).toThrow(/RETENTION_UNUSED_MERCHANTS_DAYS/);
  });

  it('webhook receivers and hosts: a cap per receiver below the slots, a breaker, a capped resolver', () => {
    const config = loadConfig(base);
    expect(config.worker).toMatchObject({ webhookConcurrency: 20, webhookReceiverConcurrency: 4, webhookBreakerFailures: 5, webhookBreakerCooldownMs: 30_000 });
    expect(config.webhookDns).toEqual({ servers: [], timeoutMs: 2_000, tries: 2, maxInFlight: 64 });
    // a worker with fewer slots than the default cap gets a cap of its slots
    expect(loadConfig({ ...base, WEBHOOK_CONCURRENCY: '2' }).worker.webhookReceiverConcurrency).toBe(2);
    expect(loadConfig({ ...base, WEBHOOK_DNS_SERVERS: '127.0.0.1:5353,::1,[::1]:53' }).webhookDns.servers).toEqual(['127.0.0.1:5353', '::1', '[::1]:53']);
  });

  it('enables a network only when its RPC URL is set', () => {
    const config = loadConfig({ ...base, RPC_URL_8453: 'https://mainnet.base.org', CONFIRMATIONS_8453: '3' });
    expect(config.networks.map((n) => [n.chainId, n.confirmations])).toEqual([
      [8453, 3],
      [84532, 1],
    ]);
  });

  it('reads several RPC endpoints per network and the factory allowlist', () => {
    const config = loadConfig({
      ...base,
      RPC_URL_84532: 'http://127.0.0.1:1, https://rpc.example/key-abc',
      WALLET_FACTORIES_84532: '0x00000000000000000000000000000000000000Aa',
    });
    expect(config.networks[0]).toMatchObject({
      rpcUrl: 'http://127.0.0.1:1',
      rpcUrls: ['http://127.0.0.1:1', 'https://rpc.example/key-abc'],
      walletFactories: ['0x00000000000000000000000000000000000000aa'],
    });
    // an error names the entry, never the URL (it can carry a provider key)
    expect(() => loadConfig({ ...base, RPC_URL_84532: 'https://ok.example,ftp://secret-key@x' })).toThrow('RPC_URL_84532 must be a http or https URL (entry 2)');
    expect(() => loadConfig({ ...base, RPC_URL_84532: 'https://ok.example,ftp://secret-key@x' })).not.toThrow(/secret-key/);
    expect(() => loadConfig({ ...base, WALLET_FACTORIES_84532: '0x12' })).toThrow('WALLET_FACTORIES_84532 entry 1 must be a 20-byte');
  });

  it('reads the abuse limits per network and overall', () => {
    const config = loadConfig({ ...base, GAS_CAP_TRANSFER_84532: '120000', MAX_FEE_PER_GAS_GWEI_84532: '5', MIN_PAYMENT_AMOUNT: '0', FEE_AMOUNT: '500' });
    expect(config.networks[0].gasCaps.transfer).toBe(120_000n);
    expect(config.networks[0].maxFeePerGas).toBe(5_000_000_000n);
    expect(config.abuse).toMatchObject({ minPaymentAmount: 0n, configuredMinPaymentAmount: 0n });
    // the minimum follows the fee unless set; unset, the worker takes each settlement's own fee instead
    expect(loadConfig({ ...base, FEE_AMOUNT: '500' }).abuse).toMatchObject({ minPaymentAmount: 500n, configuredMinPaymentAmount: undefined });
  });

  it('reads the failure accounting: defaults, and each variable', () => {
    expect(loadConfig(base).abuse).toMatchObject({
      payerPauseAfterFailures: 3,
      merchantPauseAfterFailures: 10,
      failurePauseWindowMs: 3_600_000,
      contractPayerMaxInFlight: 1,
      sequentialContractPayers: 'refuse',
    });
    const set = loadConfig({
      ...base,
      PAYER_PAUSE_AFTER_FAILURES: '5',
      MERCHANT_PAUSE_AFTER_FAILURES: '50',
      FAILURE_PAUSE_WINDOW_MS: '60000',
      CONTRACT_PAYER_MAX_IN_FLIGHT: '2',
      SEQUENTIAL_CONTRACT_PAYERS: 'allow',
    }).abuse;
    expect(set).toMatchObject({ payerPauseAfterFailures: 5, merchantPauseAfterFailures: 50, failurePauseWindowMs: 60_000, contractPayerMaxInFlight: 2, sequentialContractPayers: 'allow' });
  });

  it.each([
    [{ MIN_PAYMENT_AMOUNT: '-1' }, 'MIN_PAYMENT_AMOUNT must be a whole number'],
    [{ SETTLEMENT_MAX_ATTEMPTS: '0' }, 'SETTLEMENT_MAX_ATTEMPTS must be between 1 and 1000'],
    [{ TREASURY_PRIVATE_KEY: '0x12' }, 'TREASURY_PRIVATE_KEY must be a 32-byte hex private key'],
    [{ TREASURY_PRIVATE_KEY: undefined }, 'RELAYER_PRIVATE_KEYS is required without TREASURY_PRIVATE_KEY'],
    [{ TREASURY_PRIVATE_KEY: '0x' + '00'.repeat(32) }, 'TREASURY_PRIVATE_KEY is not a valid secp256k1 private key'],
    [{ DATABASE_URL: undefined }, 'DATABASE_URL is required but not set'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must be a postgres or postgresql URL'],
    [{ REDIS_URL: 'nope' }, 'REDIS_URL is not a valid URL'],
    [{ PORT: '70000' }, 'PORT must be between 0 and 65535 (got 70000)'],
    [{ PORT: 'eighty' }, 'PORT must be a whole number (got "eighty")'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of error, warn, info, http, verbose, debug, silly (got "loud")'],
    [{ RPC_URL_84532: 'ftp://x' }, 'RPC_URL_84532 must be a http or https URL'],
    [{ RPC_URL_84532: undefined }, 'RPC_URL_<chainId> must be set for at least one network'],
    [{ TOKEN_ADDRESS_84532: '0x1234' }, 'TOKEN_ADDRESS_84532 must be a 20-byte 0x-prefixed hex address'],
    [{ CONFIRMATIONS_84532: '0' }, 'CONFIRMATIONS_84532 must be between 1 and 100 (got 0)'],
    [{ RELAYER_PRIVATE_KEYS: `${TREASURY},0xbad` }, 'RELAYER_PRIVATE_KEYS entry 2 must be a 32-byte hex private key'],
    [{ FEE_AMOUNT: '0.01' }, 'FEE_AMOUNT must be a whole number of smallest token units (got "0.01")'],
    [{ WEBHOOK_SECRET: '' }, 'WEBHOOK_SECRET is required but not set'],
    [{ WEBHOOK_SECRET: 'short-secret' }, 'WEBHOOK_SECRET must be at least 32 characters'],
    [{ TREASURY_ADDRESS: '0x' + '22'.repeat(20) }, 'TREASURY_ADDRESS does not match TREASURY_PRIVATE_KEY'],
    [{ RELAYER_ADDRESSES: '0x' + '22'.repeat(20) }, 'RELAYER_ADDRESSES does not match RELAYER_PRIVATE_KEYS'],
    [{ WEBHOOK_ALLOWED_PORTS: '443,http' }, 'WEBHOOK_ALLOWED_PORTS entry "http" must be a port number'],
    [{ WEBHOOK_RECEIVER_CONCURRENCY: '21' }, 'WEBHOOK_RECEIVER_CONCURRENCY must be between 1 and 20 (got 21)'],
    [{ WEBHOOK_CONCURRENCY: '2', WEBHOOK_RECEIVER_CONCURRENCY: '3' }, 'WEBHOOK_RECEIVER_CONCURRENCY must be between 1 and 2 (got 3)'],
    [{ WEBHOOK_BREAKER_FAILURES: '0' }, 'WEBHOOK_BREAKER_FAILURES must be between 1 and 1000 (got 0)'],
    [{ WEBHOOK_BREAKER_COOLDOWN_MS: '10' }, 'WEBHOOK_BREAKER_COOLDOWN_MS must be between 100 and 3600000 (got 10)'],
    [{ WEBHOOK_DNS_SERVERS: 'dns.example.com' }, 'WEBHOOK_DNS_SERVERS entry "dns.example.com" must be an IP address'],
    [{ WEBHOOK_DNS_SERVERS: '127.0.0.1:70000' }, 'WEBHOOK_DNS_SERVERS entry "127.0.0.1:70000" must be an IP address'],
    [{ WEBHOOK_DNS_SERVERS: ':::::' }, 'WEBHOOK_DNS_SERVERS entry ":::::" must be an IP address'],
    [{ WEBHOOK_DNS_SERVERS: '999.1.1.1' }, 'WEBHOOK_DNS_SERVERS entry "999.1.1.1" must be an IP address'],
    [{ WEBHOOK_DNS_TIMEOUT_MS: '0' }, 'WEBHOOK_DNS_TIMEOUT_MS must be between 50 and 30000 (got 0)'],
    [{ WEBHOOK_DNS_MAX_IN_FLIGHT: '0' }, 'WEBHOOK_DNS_MAX_IN_FLIGHT must be between 1 and 10000 (got 0)'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV must be one of development, production, test (got "staging")'],
    [{ QUEUE_PREFIX: 'a b' }, 'QUEUE_PREFIX may only contain'],
    [{ SETTLEMENT_MODE: 'fast' }, 'SETTLEMENT_MODE must be one of atomic, sequential (got "fast")'],
    [{ SEQUENTIAL_CONTRACT_PAYERS: 'maybe' }, 'SEQUENTIAL_CONTRACT_PAYERS must be one of refuse, allow (got "maybe")'],
    [{ PAYER_PAUSE_AFTER_FAILURES: '0' }, 'PAYER_PAUSE_AFTER_FAILURES must be between 1 and 1000'],
    [
      { RELAYER_PRIVATE_KEYS: Array.from({ length: 9 }, (_, i) => '0x' + (i + 1).toString(16).padStart(64, '0')).join(',') },
      'RELAYER_PRIVATE_KEYS and RELAYER_SIGNERS name 9 keys; the settlement executor admits 8 (or set SETTLEMENT_MODE=sequential)',
    ],
  ])('%j fails naming the variable', (override, message) => {
    const error = failure({ ...base, ...override });
    expect(error.message.startsWith(message)).toBe(true);
  });

  it('never echoes a private key in its error', () => {
    const bad = '0x' + 'zz'.repeat(32);
    expect(failure({ ...base, TREASURY_PRIVATE_KEY: bad }).message).not.toContain('zz');
  });
});

describe('each app reads only what it uses', () => {
  const address = '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a';
  const apiEnv = { ...base, TREASURY_PRIVATE_KEY: undefined, TREASURY_ADDRESS: address };

  it('the API needs no private key: addresses only', () => {
    const config = loadApiConfig({ ...apiEnv, RELAYER_ADDRESSES: `0x${'33'.repeat(20)},0x${'44'.repeat(20)}` });
    expect(config.treasuryAddress).toBe(address);
    expect(config.relayerAddresses).toEqual([`0x${'33'.repeat(20)}`, `0x${'44'.repeat(20)}`]);
    expect(config).not.toHaveProperty('treasury');
    expect(config).not.toHaveProperty('relayers');
    // worker settings are not the API's business: a bad one does not stop it
    expect(() => loadApiConfig({ ...apiEnv, WORKER_QUEUES: 'nonsense' })).not.toThrow();
    expect(failure({ ...apiEnv, TREASURY_ADDRESS: undefined }, loadApiConfig).message).toBe('TREASURY_ADDRESS is required but not set');
  });

  it('the worker reads the keys (agreeing with any address given) and none of the HTTP settings', () => {
    const config = loadWorkerConfig({ ...base, TREASURY_ADDRESS: address.toUpperCase().replace('0X', '0x'), PORT: 'eighty', API_KEYS: 'x' });
    expect(config.treasury?.address).toBe(address);
    expect(config).not.toHaveProperty('port');
    expect(config).not.toHaveProperty('apiKeys');
  });

  it('the worker on the atomic path needs no treasury key: relayer keys and the treasury address', () => {
    const relayerKey = '0x' + '5a'.repeat(32);
    const env = { ...base, TREASURY_PRIVATE_KEY: undefined, TREASURY_ADDRESS: address, RELAYER_PRIVATE_KEYS: relayerKey };
    const config = loadWorkerConfig(env);
    expect(config.treasury).toBeUndefined();
    expect(config.treasuryAddress).toBe(address);
    expect(config.relayers.map((r) => r.privateKey)).toEqual([relayerKey]);
    // the sequential path sends fees from the treasury: it is an explicit choice, with the key
    expect(failure({ ...env, SETTLEMENT_MODE: 'sequential' }, loadWorkerConfig).message).toBe(
      'TREASURY_PRIVATE_KEY is required with SETTLEMENT_MODE=sequential (the treasury sends each fee itself); SETTLEMENT_MODE=atomic needs no treasury key in the worker',
    );
    expect(failure({ ...env, RELAYER_PRIVATE_KEYS: undefined }, loadWorkerConfig).message).toBe(
      'RELAYER_PRIVATE_KEYS is required without TREASURY_PRIVATE_KEY (the relayers send every settlement; RELAYER_SIGNERS for keys in KMS or an HSM)',
    );
    expect(failure({ ...env, TREASURY_ADDRESS: undefined }, loadWorkerConfig).message).toBe('TREASURY_ADDRESS is required but not set');
  });
});

describe('keys held by signers (RELAYER_SIGNERS, TREASURY_SIGNER)', () => {
  const address = '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a';
  const keyless = { ...base, TREASURY_PRIVATE_KEY: undefined, TREASURY_ADDRESS: address };

  it('reads the specs as given, checking only their form (the worker opens them)', () => {
    const config = loadWorkerConfig({ ...keyless, RELAYER_SIGNERS: 'kms:arn:aws:kms:us-east-1:111122223333:key/abc, pkcs11:token=relayers;object=r1?module-path=/lib/x.so&pin-value=1' });
    expect(config.relayerSigners).toEqual(['kms:arn:aws:kms:us-east-1:111122223333:key/abc', 'pkcs11:token=relayers;object=r1?module-path=/lib/x.so&pin-value=1']);
    expect(config.relayers).toEqual([]);
    expect(config.treasury).toBeUndefined();
  });

  it('refuses a spec of an unknown kind, the same spec twice, and two treasury keys, naming the variable', () => {
    expect(failure({ ...keyless, RELAYER_SIGNERS: 'vault:secret/x' }, loadWorkerConfig).message).toBe(
      'RELAYER_SIGNERS entry 1 must be kms:<key id or ARN> or pkcs11:<RFC 7512 URI> (a comma inside a URI is written %2C)',
    );
    expect(failure({ ...keyless, RELAYER_SIGNERS: 'kms:a,kms:a' }, loadWorkerConfig).message).toBe('RELAYER_SIGNERS lists the same signer twice');
    expect(failure({ ...base, TREASURY_SIGNER: 'kms:t' }, loadWorkerConfig).message).toBe('TREASURY_SIGNER and TREASURY_PRIVATE_KEY name the same key twice: set one');
  });

  it('lets a treasury signer stand for the treasury key on the sequential path', () => {
    const config = loadWorkerConfig({ ...keyless, TREASURY_SIGNER: 'kms:treasury', RELAYER_SIGNERS: 'kms:r1', SETTLEMENT_MODE: 'sequential' });
    expect(config.treasurySigner).toBe('kms:treasury');
  });

  it('counts signers with the local keys against the executor’s eight relayer slots', () => {
    const nine = Array.from({ length: 9 }, (_, i) => `kms:key-${i}`).join(',');
    expect(failure({ ...keyless, RELAYER_SIGNERS: nine }, loadWorkerConfig).message).toBe(
      'RELAYER_PRIVATE_KEYS and RELAYER_SIGNERS name 9 keys; the settlement executor admits 8 (or set SETTLEMENT_MODE=sequential)',
    );
  });
});

describe('TRANSACTION_PROVIDER=openzeppelin-relayer', () => {
  const address = '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a';
  const relayerServer = {
    ...base,
    TREASURY_PRIVATE_KEY: undefined,
    TREASURY_ADDRESS: address,
    TRANSACTION_PROVIDER: 'openzeppelin-relayer',
    OZ_RELAYER_URL: 'http://127.0.0.1:8080',
    OZ_RELAYER_API_KEY: 'key',
    OZ_RELAYER_IDS_84532: 'treasury,relayer-1',
  };

  it('holds no key, and leaves the sequential path to the relayer server (its treasury relayer is checked at start-up)', () => {
    const config = loadWorkerConfig({ ...relayerServer, SETTLEMENT_MODE: 'sequential' });
    expect(config.transactionProvider).toEqual({ kind: 'openzeppelin-relayer', url: 'http://127.0.0.1:8080', apiKey: 'key', relayerIds: new Map([[84532, ['treasury', 'relayer-1']]]), allowTreasury: false });
    expect([config.treasury, config.treasurySigner, config.relayers, config.relayerSigners]).toEqual([undefined, undefined, [], []]);
  });

  it('accepts a treasury relayer only when OZ_RELAYER_ALLOW_TREASURY says so (default: refused at start-up)', () => {
    const allowed = loadWorkerConfig({ ...relayerServer, OZ_RELAYER_ALLOW_TREASURY: 'true' }).transactionProvider;
    expect(allowed.kind === 'openzeppelin-relayer' && allowed.allowTreasury).toBe(true);
    expect(failure({ ...relayerServer, OZ_RELAYER_ALLOW_TREASURY: 'yes please' }, loadWorkerConfig).message).toMatch(/^OZ_RELAYER_ALLOW_TREASURY /);
  });

  it('refuses a key of its own, naming it', () => {
    expect(failure({ ...relayerServer, RELAYER_PRIVATE_KEYS: '0x' + '5a'.repeat(32) }, loadWorkerConfig).message).toBe(
      'RELAYER_PRIVATE_KEYS must be unset with TRANSACTION_PROVIDER=openzeppelin-relayer (the relayer server holds the keys)',
    );
  });
});
