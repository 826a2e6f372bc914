export { WebhookEventType } from './event-types';
export { parseWebhookUrl, assertPublicHost, WebhookUrlRejected } from './address-policy';
export { webhookEventRow, type NewWebhookEvent, WebhookOutbox } from './webhook-outbox';
export { verifyWebhookDelivery, verifyWebhookHeaders, type WebhookCheck } from './signature';
export { safeHttpPost } from './safe-http-post';
export { WEBHOOK_TIMEOUT_MS, type AttemptResult, WebhookDelivery } from './webhook-delivery';
export { categoryOf } from './delivery-outcome';
export { HostResolver } from './host-resolver';
export { ReceiverGate } from './receiver-gate';
