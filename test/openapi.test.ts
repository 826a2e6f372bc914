// The OpenAPI document is generated from the request schemas; it must be valid OpenAPI 3.1 and
// describe every route the app serves.
import { Validator } from '@seriousme/openapi-schema-validator';
import type { Express } from 'express';
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi, type ApiRuntime } from '../apps/api/src/build-api';
import { REDIS_URL } from './support/test-stack';

let api: ApiRuntime;
beforeAll(() => {
  api = buildApi(
    loadConfig({
      DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/postgres',
      REDIS_URL,
      TREASURY_PRIVATE_KEY: '0x' + '11'.repeat(32),
      WEBHOOK_SECRET: 'a-master-secret-of-at-least-32-characters',
      RPC_URL_84532: 'http://127.0.0.1:1',
      QUEUE_PREFIX: 'openapi-test',
    }),
    createSilentLogger(),
  );
});
afterAll(async () => {
  await api.close();
});

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Every (method, path) the Express app has a route for, with `:param` written as `{param}`. */
function servedRoutes(app: Express): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) {
          found.push(`${method.toUpperCase()} ${layer.route.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
        }
      } else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return [...new Set(found)].sort();
}

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const res = await supertest(api.app).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const result = await new Validator().validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents every route the app serves', async () => {
    const doc = (await supertest(api.app).get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)),
    );
    // route parameter names differ between Express and the document; compare by shape (/docs/ is /docs)
    const shape = (route: string) => route.replace(/\{[^}]+\}/g, '{}').replace(/(.)\/$/, '$1');
    const documentedShapes = new Set([...documented].map(shape));
    const served = servedRoutes(api.app);
    expect(served).toEqual(expect.arrayContaining(['POST /v1/verify', 'POST /v1/settle', 'GET /v1/settlements/{id}', 'GET /metrics', 'POST /v1/merchants/{address}/webhook-secret']));
    const missing = served.filter((route) => !documentedShapes.has(shape(route)));
    expect(missing).toEqual([]);
  });

  it('uses the very schemas that validate requests', async () => {
    const { verifyFormASchema } = await import('@facilitator/schemas');
    const doc = (await supertest(api.app).get('/openapi.json')).body;
    const { $id: _id, ...schema } = verifyFormASchema as unknown as Record<string, unknown>;
    expect(doc.components.schemas.VerifyRequestFormA).toEqual(JSON.parse(JSON.stringify(schema)));
  });

  it('renders a reference page at /docs', async () => {
    // /docs sends the browser to /docs/, where the page's relative asset URLs resolve (test/browser renders both)
    const res = await supertest(api.app).get('/docs/');
    expect(res.status).toBe(200);
    expect(res.text).toContain('swagger-ui');
  });
});
