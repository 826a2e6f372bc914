export * from './payment';
export * from './networks';
export * from './normalize';
export * from './failure-reasons';
export * from './chain-reader';
export * from './checks';
export * from './verification-service';
