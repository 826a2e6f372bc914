export * from './event-types';
export * from './address-policy';
export * from './webhook-outbox';
