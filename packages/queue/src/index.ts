export { isQueueName, type QueueName, ALL_QUEUES } from './queue-names';
export type { SettlementJobData, WebhookJobData, MaintenanceJobData } from './job-payloads';
export { createRedisConnection } from './redis-connection';
export { createQueues, WEBHOOK_ATTEMPTS, type Queues, queueDefaults } from './queues';
export { deleteQueueKeys } from './delete-queue-keys';
export { openQueueStore, queueStoreTargetOf, type QueueStore, type QueueStoreTarget } from './queue-store';
export { enqueueSettlement, SettlementJobPriority, enqueueWebhookDelivery, scheduleMaintenance, JobName, type JobDataOf } from './jobs';
