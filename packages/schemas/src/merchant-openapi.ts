import { merchantActionRequestSchema, merchantMinimumRequestSchema, merchantRotateRequestSchema } from './merchant-requests';
import { merchantPageOpenApiPaths, merchantPageOpenApiSchemas } from './merchant-page-openapi';
import type { PathItems } from './openapi';

/** The merchant endpoints in the OpenAPI document (`buildOpenApiDocument({ extraPaths, extraSchemas })`). */
export const merchantOpenApiSchemas: Record<string, object> = {
  ...merchantPageOpenApiSchemas,
  MerchantActionRequest: merchantActionRequestSchema,
  MerchantRotateRequest: merchantRotateRequestSchema,
  MerchantMinimumRequest: merchantMinimumRequestSchema,
  MerchantRequestDomain: {
    type: 'object',
    required: ['network', 'domain', 'primary_type', 'types'],
    properties: {
      network: { type: 'string', description: 'CAIP-2 id of the identity chain: contract merchants prove control (ERC-1271) there and only there' },
      domain: {
        type: 'object',
        required: ['name', 'version', 'chainId', 'verifyingContract'],
        properties: {
          name: { type: 'string' },
          version: { type: 'string' },
          chainId: { type: 'integer' },
          verifyingContract: { type: 'string', description: 'this deployment\'s treasury: a signature made for another deployment is refused' },
        },
      },
      primary_type: { type: 'string' },
      types: { type: 'object' },
    },
  },
  MerchantWebhookSecret: {
    type: 'object',
    required: ['merchant', 'secret'],
    properties: {
      merchant: { type: 'string' },
      secret: { type: 'string', description: 'whsec_ + base64 of 32 bytes (Standard Webhooks); the HMAC key is the decoded bytes' },
      previous_secret: { type: 'string', description: 'during a rotation: the secret before, which still signs' },
      previous_secret_expires_at: { type: 'string', format: 'date-time' },
    },
  },
  MerchantSettleKey: {
    type: 'object',
    required: ['merchant', 'settle_key', 'settle_protection'],
    properties: {
      merchant: { type: 'string' },
      settle_key: { type: 'string', description: 'shown once; send as Authorization: Bearer <key> on settle' },
      settle_protection: { type: 'boolean' },
    },
  },
  MerchantSettings: {
    type: 'object',
    required: ['merchant', 'settle_protection', 'minimum'],
    properties: {
      merchant: { type: 'string' },
      settle_protection: { type: 'boolean' },
      minimum: { type: ['string', 'null'], description: 'the merchant own minimum; null: the service default' },
    },
  },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(ref('ErrorEnvelope'), description);
const merchantParam = { name: 'address', in: 'path', required: true, description: 'the merchant: its payTo address', schema: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' } };
const body = (name: string) => ({ required: true, content: { 'application/json': { schema: ref(name) } } });
const signed = (operationId: string, summary: string, request: string, ok: object) => ({
  post: {
    operationId,
    tags: ['merchants'],
    summary,
    parameters: [merchantParam],
    requestBody: body(request),
    responses: {
      '200': ok,
      '400': error('invalid_request (including an expiry more than 600 s ahead)'),
      '401': error('unauthorized: not signed by the merchant, expired, or replayed'),
    },
  },
});

export const merchantOpenApiPaths: PathItems = {
  ...merchantPageOpenApiPaths,
  '/v1/merchants/request-domain': {
    get: {
      operationId: 'getMerchantRequestDomain',
      tags: ['merchants'],
      summary: 'What merchant requests are signed for here: the EIP-712 domain (this deployment: its treasury as verifyingContract, its identity chain) and types',
      responses: {
        '200': json(ref('MerchantRequestDomain'), 'sign MerchantRequest with this domain; proof.network must be this network'),
      },
    },
  },
  '/v1/merchants/{address}/webhook-secret': signed(
    'getMerchantWebhookSecret',
    'The merchant webhook secret (created on first use); signed with the payTo key',
    'MerchantActionRequest',
    json(ref('MerchantWebhookSecret'), 'the current secret, and the previous one during a rotation'),
  ),
  '/v1/merchants/{address}/webhook-secret/rotate': signed(
    'rotateMerchantWebhookSecret',
    'A new webhook secret; the old one keeps signing beside it for the grace period (default 24 h; grace_seconds 0 retires it at once)',
    'MerchantRotateRequest',
    json(ref('MerchantWebhookSecret'), 'the new secret and the previous one'),
  ),
  '/v1/merchants/{address}/settle-key': signed(
    'enableMerchantSettleProtection',
    'Turn settle protection on: settles of payments to this merchant then need Authorization: Bearer <settle_key>',
    'MerchantActionRequest',
    json(ref('MerchantSettleKey'), 'the key, shown once (a new request replaces it)'),
  ),
  '/v1/merchants/{address}/settle-key/revoke': signed(
    'disableMerchantSettleProtection',
    'Turn settle protection off; the merchant minimum returns to the default',
    'MerchantActionRequest',
    json(ref('MerchantSettings'), 'the merchant settings now'),
  ),
  '/v1/merchants/{address}/minimum': signed(
    'setMerchantMinimum',
    'The merchant own minimum payment (below the fee only with settle protection on)',
    'MerchantMinimumRequest',
    json(ref('MerchantSettings'), 'the merchant settings now'),
  ),
};
