export * from './queue-names';
export * from './job-payloads';
export * from './redis-connection';
export * from './queues';
export * from './delete-queue-keys';
export * from './queue-store';
export * from './jobs';
