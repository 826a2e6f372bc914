import type { PathItems } from './openapi';
import { address, shortString } from './primitives';
import { compileValidator } from './validator';

/**
 * The x402 `bazaar` discovery endpoints under /x402 (issue 45), as `@x402/extensions` 2.27's `withBazaar`
 * client calls them: `GET /discovery/resources` and `GET /discovery/search`. Query strings arrive as text.
 */
export const DISCOVERY_MAX_LIMIT = 100;
export const DISCOVERY_DEFAULT_LIMIT = 20;
/** the deepest page a client may ask for (offset + limit): deeper pages cost a scan of every row before them */
export const DISCOVERY_MAX_OFFSET = 10_000;

const filters = {
  type: { type: 'string', enum: ['http', 'mcp'], description: 'the resource type' },
  payTo: { ...address, description: 'only resources paid to this address' },
  scheme: { ...shortString, description: 'only resources accepting this scheme, e.g. exact' },
  network: { ...shortString, description: 'only resources accepting payment on this CAIP-2 network' },
  extensions: { ...shortString, description: 'only resources whose listing carries this extension key (e.g. bazaar)' },
  limit: { type: 'string', pattern: '^[0-9]{1,3}$', description: `page size, 1-${DISCOVERY_MAX_LIMIT} (default ${DISCOVERY_DEFAULT_LIMIT})` },
} as const;

export const discoveryListQuerySchema = {
  $id: 'DiscoveryListQuery',
  type: 'object',
  properties: { ...filters, offset: { type: 'string', pattern: '^[0-9]{1,5}$', description: `items skipped (at most ${DISCOVERY_MAX_OFFSET})` } },
  additionalProperties: false,
} as const;

export const discoverySearchQuerySchema = {
  $id: 'DiscoverySearchQuery',
  type: 'object',
  required: ['query'],
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 256, description: 'words to find (Postgres full-text search, web search syntax: "quoted phrase", -excluded, or)' },
    ...filters,
    cursor: { type: 'string', pattern: '^[0-9]{1,5}$', description: 'pagination.cursor of the previous page' },
  },
  additionalProperties: false,
} as const;

export interface DiscoveryQueryBody {
  type?: string;
  payTo?: string;
  scheme?: string;
  network?: string;
  extensions?: string;
  limit?: string;
  offset?: string;
  query?: string;
  cursor?: string;
}

export const validateDiscoveryListQuery = compileValidator<DiscoveryQueryBody>(discoveryListQuerySchema, 'discovery list query');
export const validateDiscoverySearchQuery = compileValidator<DiscoveryQueryBody>(discoverySearchQuerySchema, 'discovery search query');

const accepts = {
  type: 'array',
  description: "the requirements of the payment that settled (its payTo is the address actually paid)",
  items: { type: 'object', properties: { scheme: { type: 'string' }, network: { type: 'string' }, amount: { type: 'string' }, asset: { type: 'string' }, payTo: { type: 'string' } } },
};

export const discoveryOpenApiSchemas: Record<string, object> = {
  DiscoveryResource: {
    type: 'object',
    required: ['resource', 'type', 'x402Version', 'accepts', 'lastUpdated', 'stats'],
    properties: {
      resource: { type: 'string', description: 'origin and route template (or path) of the resource' },
      type: { enum: ['http', 'mcp'] },
      x402Version: { type: 'integer' },
      accepts,
      lastUpdated: { type: 'string', format: 'date-time' },
      description: { type: 'string' },
      mimeType: { type: 'string' },
      serviceName: { type: 'string' },
      tags: { type: 'array', items: { type: 'string' } },
      iconUrl: { type: 'string' },
      extensions: { type: 'object', description: 'the declaration: `bazaar` with its info, schema and routeTemplate' },
      stats: {
        type: 'object',
        description: 'what only the facilitator knows; each figure counts a payer once (wash traffic from one payer is one)',
        required: ['paymentsSettled', 'lastSettled', 'settleSuccessRate', 'medianPrice'],
        properties: {
          paymentsSettled: { type: 'integer', description: 'settled payments, each payer counted once' },
          lastSettled: { type: 'string', format: 'date-time' },
          settleSuccessRate: { type: ['number', 'null'], description: "mean of each payer's settled / (settled + failed)" },
          medianPrice: { type: ['string', 'null'], description: "median of each payer's last settled amount (atomic units)" },
        },
      },
    },
  },
  DiscoveryResourcesResponse: {
    type: 'object',
    required: ['x402Version', 'items', 'pagination'],
    properties: {
      x402Version: { const: 2 },
      items: { type: 'array', items: { $ref: '#/components/schemas/DiscoveryResource' } },
      pagination: { type: 'object', required: ['limit', 'offset', 'total'], properties: { limit: { type: 'integer' }, offset: { type: 'integer' }, total: { type: 'integer' } } },
    },
  },
  DiscoverySearchResponse: {
    type: 'object',
    required: ['x402Version', 'resources', 'partialResults', 'pagination'],
    properties: {
      x402Version: { const: 2 },
      resources: { type: 'array', items: { $ref: '#/components/schemas/DiscoveryResource' } },
      partialResults: { type: 'boolean', description: 'more matches exist beyond this page' },
      pagination: { type: 'object', required: ['limit', 'cursor'], properties: { limit: { type: 'integer' }, cursor: { type: ['string', 'null'] } } },
    },
  },
  X402Refusal: {
    type: 'object',
    required: ['errorReason', 'errorMessage'],
    properties: { errorReason: { type: 'string' }, errorMessage: { type: 'string' } },
  },
};

const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const parameter = (name: string, schema: object, required = false) => ({ name, in: 'query', required, description: (schema as { description?: string }).description, schema });
const filterParameters = Object.entries(filters).map(([name, schema]) => parameter(name, schema));

export const discoveryOpenApiPaths: PathItems = {
  '/x402/discovery/resources': {
    get: {
      operationId: 'x402DiscoveryResources',
      tags: ['x402 facilitator'],
      summary: "x402 bazaar catalog: resources whose payment settled here, best first (withBazaar's listResources)",
      description:
        'A resource is listed for the payTo actually paid, once a payment to it declaring it (`extensions.bazaar`) settled, until none is paid for DISCOVERY_RETENTION_DAYS. Ranked by payers, then the latest payment. Answers are kept a few seconds; rate-limited like verify and settle.',
      security: [{}],
      parameters: [...filterParameters, parameter('offset', discoveryListQuerySchema.properties.offset)],
      responses: {
        '200': json(ref('DiscoveryResourcesResponse'), 'a page of the catalog'),
        '400': json(ref('X402Refusal'), 'invalid_payload: a query parameter is invalid (named in errorMessage)'),
        '429': json(ref('X402Refusal'), 'rate_limited'),
      },
    },
  },
  '/x402/discovery/search': {
    get: {
      operationId: 'x402DiscoverySearch',
      tags: ['x402 facilitator'],
      summary: "x402 bazaar catalog search: Postgres full-text search over description, service name, tags, URL and declaration (withBazaar's search)",
      security: [{}],
      parameters: [parameter('query', discoverySearchQuerySchema.properties.query, true), ...filterParameters, parameter('cursor', discoverySearchQuerySchema.properties.cursor)],
      responses: {
        '200': json(ref('DiscoverySearchResponse'), 'matches, best first'),
        '400': json(ref('X402Refusal'), 'invalid_payload: query missing or a parameter invalid (named in errorMessage)'),
        '429': json(ref('X402Refusal'), 'rate_limited'),
      },
    },
  },
};
