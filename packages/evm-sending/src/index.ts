// @facilitator/evm-sending: where keys are used. Every transaction the service sends is signed here,
// through a signer from @facilitator/signers (a local key, AWS KMS or a PKCS#11 HSM), under one nonce
// table, one fee policy and one way of following outcomes. The only other signature a key makes is the
// treasury's EIP-7702 delegation (`executor setup`, packages/evm-executor), which can be made offline.

// the port every provider implements (the local keys here; OpenZeppelin Relayer in its own package)
export type { NetworkFee, SubmittedTransaction, TransactionLog, TransactionOutcome, TransactionProvider, TransactionRequest } from './transaction-provider';
export { LocalKeyTransactionProvider } from './local-key-transaction-provider';
export { rowDigest, type AuthenticatedFields } from './row-authenticator';
export type { TransactionLogger } from './sending-options';
export { SHARED_SENDING_DEFAULTS, SILENT_TRANSACTION_LOGGER } from './sending-options';
export { RelayerRotation } from './relayer-rotation';

// how a send ends
export { TransactionSendingError } from './errors/transaction-sending-error';
export { TransactionWouldRevertError } from './errors/transaction-would-revert-error';
export { RpcUnavailableError } from './errors/rpc-unavailable-error';
export { TransactionRejectedError } from './errors/transaction-rejected-error';
export { NonceConsumedError } from './errors/nonce-consumed-error';
export { UnauthenticatedTransactionError } from './errors/unauthenticated-transaction-error';
export { OutcomeTimeoutError } from './errors/outcome-timeout-error';
export { IdempotencyConflictError } from './errors/idempotency-conflict-error';
export { GasCapExceededError } from './errors/gas-cap-exceeded-error';
export { minedReceiptFromRpc, type MinedTransactionReceipt } from './mined-receipt';

// shared with the external transaction providers (packages/relayer-openzeppelin), so they apply the same
// simulation, gas margin, fee cap and revert replay as the local keys
export { FeePolicy } from './fee-policy';
export { estimateSendingGas, sendingGasLimit } from './gas-estimate';
export { replayRevertReason } from './revert-replay';
export { SendingNodes, type SendingNetworks } from './sending-nodes';
