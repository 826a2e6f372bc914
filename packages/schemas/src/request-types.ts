import type { FromSchema } from 'json-schema-to-ts';
import type { authorization, exactEvmPayload } from './primitives';
import type { requirementsSchema, verifyFormASchema } from './verify-form-a';
import type { settleFormBSchema, verifyFormBSchema } from './verify-form-b';

/**
 * TypeScript shapes of the validated request bodies, derived from the ajv schemas (the single source of
 * validation, types and the OpenAPI document): a change to a schema changes these types with it.
 */
export type AuthorizationBody = FromSchema<typeof authorization>;
export type ExactEvmPayloadBody = FromSchema<typeof exactEvmPayload>;
export type RequirementsBody = FromSchema<typeof requirementsSchema>;
export type FormARequest = FromSchema<typeof verifyFormASchema>;
export type FormBVerifyRequest = FromSchema<typeof verifyFormBSchema>;
export type FormBSettleRequest = FromSchema<typeof settleFormBSchema>;
