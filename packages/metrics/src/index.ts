export * from './metrics';
export * from './queue-depth';
export * from './cached';
