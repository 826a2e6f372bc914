import { bytes32, signature, uintString } from './primitives';
import { compileValidator } from './validator';

/**
 * Bodies of the merchant endpoints (`/v1/merchants/{address}/…`). Each carries `proof`: the merchant's
 * EIP-712 signature of a `MerchantRequest` naming the action, the merchant (the path's address), the
 * other body fields as canonical JSON, a random nonce and a short expiry (see packages/merchants).
 */
const merchantProofSchema = {
  type: 'object',
  description:
    'EIP-712 signature by the merchant address (ECDSA, or ERC-1271 for a contract wallet such as a Safe) of MerchantRequest(string action,address merchant,string parameters,bytes32 nonce,uint256 expiresAt), with the domain GET /v1/merchants/request-domain publishes: { name: "x402 Facilitator", version: "2", chainId: the identity chain, verifyingContract: the treasury }',
  required: ['network', 'nonce', 'expires_at', 'signature'],
  properties: {
    network: { type: 'string', maxLength: 32, description: 'CAIP-2 id of the chain in the EIP-712 domain: the deployment\'s identity chain (GET /v1/merchants/request-domain), where a contract merchant is asked (ERC-1271)', examples: ['eip155:84532'] },
    nonce: { ...bytes32, description: '32 random bytes; each signed request is accepted once' },
    expires_at: { type: 'integer', minimum: 0, maximum: 1e12, description: 'Unix seconds; at most 600 s ahead' },
    signature,
  },
  additionalProperties: false,
} as const;

export const merchantActionRequestSchema = {
  $id: 'MerchantActionRequest',
  type: 'object',
  required: ['proof'],
  properties: { proof: merchantProofSchema },
  additionalProperties: false,
} as const;

export const merchantMinimumRequestSchema = {
  $id: 'MerchantMinimumRequest',
  type: 'object',
  required: ['minimum', 'proof'],
  properties: {
    minimum: { ...uintString, description: 'the smallest payment to this merchant, in token units; below the fee only with settle protection on' },
    proof: merchantProofSchema,
  },
  additionalProperties: false,
} as const;

export const merchantRotateRequestSchema = {
  $id: 'MerchantRotateRequest',
  type: 'object',
  required: ['proof'],
  properties: {
    grace_seconds: {
      type: 'integer',
      minimum: 0,
      maximum: 2_592_000,
      description:
        'how long the old secret keeps signing beside the new one; at most the configured grace (WEBHOOK_SECRET_GRACE_SECONDS, default 24 h), which is also the default. 0 retires it at once (a leaked secret), and a rotation always retires at once a secret still in an earlier grace period. Signed as a parameter when given.',
    },
    proof: merchantProofSchema,
  },
  additionalProperties: false,
} as const;

export interface MerchantProofBody {
  network: string;
  nonce: string;
  expires_at: number;
  signature: string;
}

export const validateMerchantActionRequest = compileValidator<{ proof: MerchantProofBody }>(merchantActionRequestSchema, 'merchant request');
export const validateMerchantMinimumRequest = compileValidator<{ minimum: string; proof: MerchantProofBody }>(merchantMinimumRequestSchema, 'merchant minimum request');
export const validateMerchantRotateRequest = compileValidator<{ grace_seconds?: number; proof: MerchantProofBody }>(merchantRotateRequestSchema, 'merchant rotate request');
