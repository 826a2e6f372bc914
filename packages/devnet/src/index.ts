export * from './anvil-process';
// a child process that dies with the one that started it (the benchmarks' apps)
export { guardChild } from './orphan-guard';
export * from './devnet';
export * from './devnet-info-file';
export * from './test-accounts';
export * from './transfer-authorization';
export { DEVNET_TOKEN_NAME, USDC_DECIMALS, USDC_EIP712_VERSION } from './usdc-deployment';
export * from './settlement-executor';
