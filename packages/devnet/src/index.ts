export * from './anvil-process';
export * from './devnet';
export * from './devnet-info-file';
export * from './test-accounts';
export * from './transfer-authorization';
export { DEVNET_TOKEN_NAME, USDC_DECIMALS, USDC_EIP712_VERSION } from './usdc-deployment';
export * from './settlement-executor';
