export * from './config';
export * from './config-error';
export * from './parsers';
// the key and address rules, for tools that read the worker's variables without its whole configuration (the CLI)
export { readRelayerAddresses, readRelayers, readTreasuryAddress } from './key-addresses';
