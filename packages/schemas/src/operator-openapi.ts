import { resolveSettlementSchema } from './operator-requests';
import type { PathItems } from './openapi';

/** The operator's actions on parked settlements in the OpenAPI document (`buildOpenApiDocument({ extraPaths, extraSchemas })`). */
export const operatorOpenApiSchemas: Record<string, object> = {
  ResolveSettlementRequest: (({ $id: _id, ...schema }) => schema)(resolveSettlementSchema),
  OperatorActionResult: {
    type: 'object',
    required: ['id', 'state'],
    properties: { id: { type: 'string' }, state: { type: 'string' }, requeued: { type: 'boolean' }, resolved: { type: 'boolean' } },
  },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const failures = {
  '400': json(ref('ErrorEnvelope'), 'the settlement is not parked, or the outcome is not reachable from its state'),
  '401': json(ref('ErrorEnvelope'), 'an operator API key (X-API-Key, one of API_KEYS) is required; without API_KEYS these are closed'),
  '404': json(ref('ErrorEnvelope'), 'no such settlement'),
};

export const operatorOpenApiPaths: PathItems = {
  '/v1/settlements/{id}/retry': {
    post: {
      operationId: 'retryParkedSettlement',
      summary: 'Run a settlement parked for an operator again (after fixing the cause); operator key',
      tags: ['operations'],
      parameters: [idParameter],
      responses: { '200': json(ref('OperatorActionResult'), 'requeued'), ...failures },
    },
  },
  '/v1/settlements/{id}/resolve': {
    post: {
      operationId: 'resolveParkedSettlement',
      summary: 'Resolve a parked settlement by hand, as found on chain (settled or failed); operator key',
      tags: ['operations'],
      parameters: [idParameter],
      requestBody: { required: true, content: { 'application/json': { schema: ref('ResolveSettlementRequest') } } },
      responses: { '200': json(ref('OperatorActionResult'), 'resolved; the merchant hears it by webhook'), ...failures },
    },
  },
};
