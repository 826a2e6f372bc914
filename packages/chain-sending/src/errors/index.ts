export * from './transaction-sending-error';
export * from './transaction-would-revert-error';
export * from './rpc-unavailable-error';
export * from './transaction-rejected-error';
export * from './nonce-consumed-error';
export * from './outcome-timeout-error';
export * from './idempotency-conflict-error';
export * from './gas-cap-exceeded-error';
