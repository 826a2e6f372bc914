export {
  loadApiConfig,
  loadWorkerConfig,
  loadConfig,
  exitOnConfigError,
  type Config,
  type ApiConfig,
  type WorkerProcessConfig,
} from './config';
export type { NetworkConfig } from './sections/networks';
export type { RetentionConfig } from './sections/retention';
export type { DiscoveryConfig } from './sections/discovery';
export { EXECUTOR_MAX_RELAYERS, type TransactionProviderConfig } from './sections/keys';
export { WEBHOOK_RETRY_DELAYS_MS } from './sections/webhooks';
export { ConfigError } from './config-error';
export { type Env, EnvReader } from './parsers';
// the key and address rules, for tools that read the worker's variables without its whole configuration (the CLI)
export { readRelayerAddresses, readRelayers, readTreasuryAddress } from './key-addresses';
