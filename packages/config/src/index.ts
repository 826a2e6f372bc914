export {
  loadApiConfig,
  loadWorkerConfig,
  loadConfig,
  exitOnConfigError,
  type NetworkConfig,
  type RetentionConfig,
  type DiscoveryConfig,
  type Config,
  type TransactionProviderConfig,
  EXECUTOR_MAX_RELAYERS,
  WEBHOOK_RETRY_DELAYS_MS,
  type ApiConfig,
  type WorkerProcessConfig,
} from './config';
export { ConfigError } from './config-error';
export { type Env, EnvReader } from './parsers';
// the key and address rules, for tools that read the worker's variables without its whole configuration (the CLI)
export { readRelayerAddresses, readRelayers, readTreasuryAddress } from './key-addresses';
