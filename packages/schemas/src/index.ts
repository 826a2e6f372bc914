import { compileValidator } from './validator';
import { settleFormASchema, verifyFormASchema } from './verify-form-a';
import { settleFormBSchema, verifyFormBSchema } from './verify-form-b';
import type { FormARequest, FormBSettleRequest, FormBVerifyRequest } from './request-types';
import { resolveSettlementSchema, type ResolveSettlementRequest } from './operator-requests';
import { settlementLookupQuerySchema, type SettlementLookupQuery } from './payment-identifier';

export { verifyFormASchema } from './verify-form-a';
/** The fields that name each form of /v1/verify and /v1/settle (their schemas' required fields), for telling a body which form it fits. */
export const FORM_A_FIELDS: readonly string[] = verifyFormASchema.required;
export const VERIFY_FORM_B_FIELDS: readonly string[] = verifyFormBSchema.required;
export const SETTLE_FORM_B_FIELDS: readonly string[] = settleFormBSchema.required;
export type { AuthorizationBody, ExactEvmPayloadBody, RequirementsBody, FormARequest, FormBVerifyRequest } from './request-types';
export { findJsonProblem, assertStorableJson } from './nesting';
export { paymentIdOf, PAYMENT_IDENTIFIER, type SettlementLookupQuery } from './payment-identifier';

export const validateVerifyFormA = compileValidator<FormARequest>(verifyFormASchema, 'verify request (Form A)');
export const validateVerifyFormB = compileValidator<FormBVerifyRequest>(verifyFormBSchema, 'verify request (Form B)');
export const validateSettleFormA = compileValidator<FormARequest>(settleFormASchema, 'settle request (Form A)');
export const validateResolveSettlement = compileValidator<ResolveSettlementRequest>(resolveSettlementSchema, 'resolve request');
export const validateSettleFormB = compileValidator<FormBSettleRequest>(settleFormBSchema, 'settle request (Form B)');
export const validateSettlementLookupQuery = compileValidator<SettlementLookupQuery>(settlementLookupQuerySchema, 'settlement lookup');
export { buildOpenApiDocument } from './openapi';
export { type X402Eip712Extra, validateX402RequestV2, validateX402RequestV1 } from './x402-requests';
export { x402OpenApiSchemas, x402OpenApiPaths } from './x402-openapi';
export {
  type MerchantProofBody,
  validateMerchantActionRequest,
  validateMerchantMinimumRequest,
  validateMerchantRotateRequest,
} from './merchant-requests';
export { merchantOpenApiSchemas, merchantOpenApiPaths } from './merchant-openapi';
export { MERCHANT_PAGE_DEFAULT_LIMIT, validateMerchantPageQuery } from './merchant-page';
export { operatorOpenApiSchemas, operatorOpenApiPaths } from './operator-openapi';
export { lookupOpenApiSchemas, lookupOpenApiPaths } from './lookup-openapi';
export {
  serviceStatusSchema,
  type ServiceStatus,
  type NetworkStatus,
  serviceStatusOpenApiSchemas,
  serviceStatusOpenApiPaths,
} from './service-status';
export { serviceIndexOpenApiPaths } from './service-index';
export {
  DISCOVERY_DEFAULT_LIMIT,
  DISCOVERY_MAX_LIMIT,
  DISCOVERY_MAX_OFFSET,
  type DiscoveryQueryBody,
  validateDiscoveryListQuery,
  validateDiscoverySearchQuery,
  discoveryOpenApiSchemas,
  discoveryOpenApiPaths,
} from './discovery';
