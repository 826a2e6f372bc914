export * from './token-abi';
export * from './rpc-provider';
// Test tooling; it loads anvil and Circle's artifacts (dev dependencies) only when called.
export * from './rpc-chain-reader';
export * from './usdc-client';
export * from './sending';
export * from './json-rpc-batch-client';
export * from './rpc';
export * from './erc6492';
