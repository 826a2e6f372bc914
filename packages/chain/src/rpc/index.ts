export * from './endpoint-health';
export * from './rpc-endpoint-pool';
export * from './failover-provider';
export * from './untrusted-call';
