export * from './metrics';
export * from './queue-depth';
