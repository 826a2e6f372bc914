import type { PathItems } from './openapi';

export const serviceIndexOpenApiPaths: PathItems = {
  '/': {
    get: {
      operationId: 'serviceIndex',
      summary: 'What this service serves: the x402 facilitator URL, the API, the pages (JSON, or HTML for a browser)',
      tags: ['status'],
      responses: {
        '200': {
          description: 'the index',
          content: {
            'application/json': { schema: { type: 'object', required: ['service', 'x402', 'api', 'pages', 'operations'] } },
            'text/html': { schema: { type: 'string' } },
          },
        },
      },
    },
  },
};
