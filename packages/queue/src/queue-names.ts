/** Every queue of ours. Their Redis keys live under the configured QUEUE_PREFIX. */
export const QueueName = {
  /** One job per settlement (job id = settlement id); the worker advances it through the state machine. */
  Settlement: 'settlement',
  /** One job per webhook event (job id = event id); retried on the spec's schedule. */
  Webhook: 'webhook',
  /** Scheduled housekeeping (retention), run once across the cluster by a BullMQ job scheduler. */
  Maintenance: 'maintenance',
} as const;

export type QueueName = (typeof QueueName)[keyof typeof QueueName];

export const ALL_QUEUES: readonly QueueName[] = [QueueName.Settlement, QueueName.Webhook, QueueName.Maintenance];

export function isQueueName(name: string): name is QueueName {
  return (ALL_QUEUES as readonly string[]).includes(name);
}
