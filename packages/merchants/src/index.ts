export * from './merchant-request';
export * from './merchant-service';
export * from './random-secrets';
export * from './secret-box';
export * from './sign-merchant-request';
export * from './opened-secrets';
export * from './merchant-sessions';
