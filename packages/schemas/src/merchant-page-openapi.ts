import { merchantAccountSchema, merchantDeliveryPageSchema, merchantPageQuerySchema, merchantSessionSchema, merchantSettlementPageSchema } from './merchant-page';
import type { PathItems } from './openapi';

/** The merchant page and its session reads in the OpenAPI document (merged into merchantOpenApiPaths). */
export const merchantPageOpenApiSchemas: Record<string, object> = {
  MerchantSession: merchantSessionSchema,
  MerchantAccount: merchantAccountSchema,
  MerchantSettlementPage: merchantSettlementPageSchema,
  MerchantDeliveryPage: merchantDeliveryPageSchema,
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(ref('ErrorEnvelope'), description);
const merchantParam = { name: 'address', in: 'path', required: true, description: 'the merchant: its payTo address', schema: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' } };
const pageParams = Object.entries(merchantPageQuerySchema.properties).map(([name, schema]) => ({ name, in: 'query', required: false, description: schema.description, schema }));
const session = [{ merchantSession: [] }];
const sessionErrors = {
  '400': error('invalid_request: a malformed address or query'),
  '401': error('unauthorized: no session, an expired or signed-out one, or one of another merchant'),
};
const read = (operationId: string, summary: string, ok: object, parameters: object[] = []) => ({
  get: { operationId, tags: ['merchant page'], summary, security: session, parameters: [merchantParam, ...parameters], responses: { '200': ok, ...sessionErrors } },
});

const asset = (operationId: string, type: string) => ({
  get: { operationId, tags: ['merchant page'], summary: "The merchant page's own script or style", responses: { '200': { description: 'the asset', content: { [type]: { schema: { type: 'string' } } } } } },
});

export const merchantPageOpenApiPaths: PathItems = {
  '/merchant': {
    get: {
      operationId: 'getMerchantPage',
      tags: ['merchant page'],
      summary: 'The merchant page: sign in with the payTo key (an EIP-1193 wallet, or a pasted signature) and see settlements, fees, allowance and webhook deliveries',
      responses: { '200': { description: 'the page (self-contained: its script and style are served beside it)', content: { 'text/html': { schema: { type: 'string' } } } } },
    },
  },
  '/merchant/page.js': asset('getMerchantPageScript', 'text/javascript'),
  '/merchant/page.css': asset('getMerchantPageStyle', 'text/css'),
  '/v1/merchants/{address}/session': {
    post: {
      operationId: 'createMerchantSession',
      tags: ['merchant page'],
      summary: 'Sign in: a signed session.create request (EIP-712 MerchantRequest, parameters {}) answers a session token for 30 minutes of reads',
      parameters: [merchantParam],
      requestBody: { required: true, content: { 'application/json': { schema: ref('MerchantActionRequest') } } },
      responses: {
        '201': json(ref('MerchantSession'), 'the session; the token is shown once'),
        '400': error('invalid_request (including an expiry more than 600 s ahead)'),
        '401': error('unauthorized: not signed by the merchant, expired, or replayed'),
      },
    },
    delete: {
      operationId: 'deleteMerchantSession',
      tags: ['merchant page'],
      summary: 'Sign out: the session token stops working at once',
      security: session,
      parameters: [merchantParam],
      responses: { '204': { description: 'signed out' }, ...sessionErrors },
    },
  },
  '/v1/merchants/{address}/account': read(
    'getMerchantAccount',
    'Fees paid so far, and per network the allowance left to the treasury, the balance, and how many settlements they cover',
    json(ref('MerchantAccount'), 'the account'),
  ),
  '/v1/merchants/{address}/settlements': read(
    'listMerchantSettlements',
    "The merchant's settlements, newest first, a page at a time",
    json(ref('MerchantSettlementPage'), 'one page'),
    pageParams,
  ),
  '/v1/merchants/{address}/settlements.csv': read(
    'exportMerchantSettlements',
    "The merchant's settlements as CSV (newest first, at most 10000 rows; cells that a spreadsheet would run as a formula are escaped)",
    { description: 'a CSV download', content: { 'text/csv': { schema: { type: 'string' } } } },
  ),
  '/v1/merchants/{address}/webhook-deliveries': read(
    'listMerchantWebhookDeliveries',
    "The merchant's webhook deliveries with every attempt, newest first, a page at a time",
    json(ref('MerchantDeliveryPage'), 'one page'),
    pageParams,
  ),
  '/v1/merchants/{address}/discovery': read(
    'listMerchantDiscoveryResources',
    "The merchant's resources in the x402 bazaar catalog, listed or not: for each, whether it is listed and why not (the latest rejected declaration's reason and the field at fault), and its figures",
    json(
      {
        type: 'object',
        required: ['resources'],
        properties: {
          resources: {
            type: 'array',
            items: {
              type: 'object',
              required: ['resource_key', 'resource', 'type', 'listed', 'rejection', 'not_listed_because', 'payments_settled', 'last_settled_at'],
              properties: {
                resource_key: { type: 'string', description: 'HTTP: method and URL; MCP: URL and tool name' },
                resource: { type: 'string' },
                type: { type: 'string' },
                listed: { type: 'boolean' },
                rejection: { type: ['object', 'null'], properties: { reason: { type: 'string' }, field: { type: 'string' }, at: { type: 'string', format: 'date-time' } } },
                not_listed_because: { type: ['string', 'null'] },
                payments_settled: { type: 'integer' },
                settle_success_rate: { type: ['number', 'null'] },
                median_price: { type: ['string', 'null'] },
                last_settled_at: { type: 'string', format: 'date-time' },
              },
            },
          },
        },
      },
      'every resource of the merchant',
    ),
  ),
};
