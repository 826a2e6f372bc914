export * from './single-flight-cache';
export * from './service-status';
