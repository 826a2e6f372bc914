export * from './verification-repository';
export * from './settlement-repository';
export * from './idempotency-repository';
export * from './pg-query';
export * from './merchant-repository';
export * from './webhook-event-repository';
export * from './chain-transaction-repository';
export * from './settlement-batch-repository';
