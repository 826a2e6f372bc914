export * from './transaction-provider';
export * from './local-key-transaction-provider';
export type { LocalKeyTransactionProviderOptions, SendPhase, SendPhaseHook, TransactionLogger } from './sending-options';
export type { SigningKey } from './signer-keyring';
export * from './relayer-rotation';
export * from './node-error-classification';
export * from './errors';
export * from './mined-receipt';
export { decodeRevertData } from './revert-reason';
