export * from './networks';
export * from './error-codes';
export * from './errors';
export * from './amounts';
export * from './eip712';
export * from './signature-recovery';
export * from './ids';
export * from './canonical-json';
