export * from './states';
export * from './step';
export * from './failures';
export * from './approval-command';
export * from './settlement-machine';
export * from './settlement-requests';
export * from './settlement-events';
