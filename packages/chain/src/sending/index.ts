export * from './transaction-provider';
export * from './local-key-transaction-provider';
export type { LocalKeyTransactionProviderOptions, SendPhase, SendPhaseHook, TransactionLogger } from './sending-options';
export { SHARED_SENDING_DEFAULTS, SILENT_TRANSACTION_LOGGER } from './sending-options';
export type { SigningKey } from './signer-keyring';
export * from './relayer-rotation';
export * from './node-error-classification';
export * from './errors';
export * from './mined-receipt';
export { decodeRevertData } from './revert-reason';
// shared with the external transaction providers (packages/relayer-openzeppelin), so they apply the same
// simulation, gas margin, fee cap and revert replay as the local keys
export { FeePolicy, type MarketReading } from './fee-policy';
export { estimateSendingGas, sendingGasLimit } from './gas-estimate';
export { replayRevertReason, type MinedCall } from './revert-replay';
export { SendingNodes, type SendingNetworks } from './sending-nodes';
