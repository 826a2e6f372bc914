export * from './calldata-gas';
export * from './executor-calls';
export * from './executor-code';
export * from './executor-setup';
export { SETTLEMENT_EXECUTOR_ARTIFACT } from './settlement-executor-artifact';
export * from './wallet-deployment-probe';
export * from './wallet-factory-calls';
