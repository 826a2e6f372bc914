import { payerFieldsDescription } from './mechanism-payloads';
import type { PathItems } from './openapi';
import { x402RequestV1Schema, x402RequestV2Schema } from './x402-requests';

/**
 * The OpenAPI description of the standard x402 facilitator endpoints under /x402, passed to
 * `buildOpenApiDocument({ extraPaths, extraSchemas })`.
 */
export const x402OpenApiSchemas: Record<string, object> = {
  X402FacilitatorRequestV1: x402RequestV1Schema,
  X402FacilitatorRequestV2: x402RequestV2Schema,
  X402VerifyResponse: {
    type: 'object',
    required: ['isValid'],
    properties: {
      isValid: { type: 'boolean' },
      invalidReason: { type: 'string', description: 'x402 reason code (docs/decisions.md, "x402 compatibility")' },
      invalidMessage: { type: 'string' },
      payer: { type: 'string', description: `the payer: ${payerFieldsDescription()}` },
    },
  },
  X402SettleResponse: {
    type: 'object',
    required: ['success', 'transaction', 'network'],
    properties: {
      success: { type: 'boolean' },
      errorReason: { type: 'string', description: 'x402 reason code (docs/decisions.md, "x402 compatibility")' },
      errorMessage: { type: 'string' },
      payer: { type: 'string' },
      transaction: { type: 'string', description: 'the settlement transaction hash; "" when there is none' },
      network: { type: 'string', description: 'the network as the request named it' },
    },
  },
  X402SupportedResponse: {
    type: 'object',
    required: ['kinds', 'extensions', 'signers'],
    properties: {
      kinds: {
        type: 'array',
        items: {
          type: 'object',
          required: ['x402Version', 'scheme', 'network'],
          properties: { x402Version: { type: 'integer' }, scheme: { type: 'string' }, network: { type: 'string' } },
        },
      },
      extensions: { type: 'array', items: { type: 'string' } },
      signers: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
    },
  },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const request = {
  required: true,
  content: { 'application/json': { schema: { oneOf: [ref('X402FacilitatorRequestV2'), ref('X402FacilitatorRequestV1')] } } },
};

export const x402OpenApiPaths: PathItems = {
  '/x402/verify': {
    post: {
      operationId: 'x402Verify',
      tags: ['x402 facilitator'],
      summary: 'Standard x402 facilitator verify (free); set the middleware facilitator URL to https://<host>/x402',
      requestBody: request,
      responses: {
        '200': json(ref('X402VerifyResponse'), 'the outcome: isValid true, or false with invalidReason'),
        '400': json(ref('X402VerifyResponse'), 'the request could not be read (invalid_payload, invalid_network, …)'),
        '503': json(ref('X402VerifyResponse'), 'unexpected_verify_error: a dependency did not answer'),
      },
    },
  },
  '/x402/settle': {
    post: {
      operationId: 'x402Settle',
      tags: ['x402 facilitator'],
      summary: 'Standard x402 facilitator settle: the fee from the merchant first, then the transfer; waits for the outcome',
      requestBody: request,
      responses: {
        '200': json(ref('X402SettleResponse'), 'the outcome: success true with the transaction, or false with errorReason'),
        '400': json(ref('X402SettleResponse'), 'the request could not be read'),
        '503': json(ref('X402SettleResponse'), 'unexpected_settle_error: a dependency did not answer'),
      },
    },
  },
  '/x402/supported': {
    get: {
      operationId: 'x402Supported',
      tags: ['x402 facilitator'],
      responses: { '200': json(ref('X402SupportedResponse'), 'kinds for every enabled network, and our signer addresses') },
    },
  },
};
