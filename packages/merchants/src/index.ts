export {
  merchantRequestDomain,
  deploymentBinding,
  merchantRequestDigest,
  MerchantAction,
  MERCHANT_REQUEST_TYPES,
  type MerchantRequestBinding,
} from './merchant-request';
export { MerchantService } from './merchant-service';
export { SecretBox } from './secret-box';
export {
  signMerchantRequest,
  signingTargetOf,
  type ProofRequest,
  type PublishedMerchantRequestDomain,
  MERCHANT_REQUEST_DOMAIN_PATH,
} from './sign-merchant-request';
export { MerchantSessions } from './merchant-sessions';
