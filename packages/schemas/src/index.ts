import { compileValidator } from './validator';
import { settleFormASchema, verifyFormASchema } from './verify-form-a';
import { settleFormBSchema, verifyFormBSchema } from './verify-form-b';
import type { FormARequest, FormBSettleRequest, FormBVerifyRequest } from './request-types';
import { resolveSettlementSchema, type ResolveSettlementRequest } from './operator-requests';

export * from './primitives';
export * from './verify-form-a';
export * from './verify-form-b';
export * from './request-types';
export * from './validator';
export * from './nesting';
export * from './operator-requests';

export const validateVerifyFormA = compileValidator<FormARequest>(verifyFormASchema, 'verify request (Form A)');
export const validateVerifyFormB = compileValidator<FormBVerifyRequest>(verifyFormBSchema, 'verify request (Form B)');
export const validateSettleFormA = compileValidator<FormARequest>(settleFormASchema, 'settle request (Form A)');
export const validateResolveSettlement = compileValidator<ResolveSettlementRequest>(resolveSettlementSchema, 'resolve request');
export const validateSettleFormB = compileValidator<FormBSettleRequest>(settleFormBSchema, 'settle request (Form B)');
export * from './responses';
export * from './openapi';
export * from './x402-requests';
export * from './x402-openapi';
export * from './merchant-requests';
export * from './merchant-openapi';
export * from './merchant-page';
export * from './operator-openapi';
