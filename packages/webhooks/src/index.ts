export * from './event-types';
export * from './address-policy';
export * from './webhook-outbox';
export * from './signature';
export * from './safe-http-post';
export * from './webhook-delivery';
export * from './delivery-outcome';
