import type { Router } from 'express';
import { apiRouter } from '../api-router';
import { ADMIN_QUEUES_PATH } from './admin-queues';
import { X402_PREFIX } from './x402';

/** What `GET /` lists: the same for every visitor, built once (nothing in it depends on the request). */
export interface ServiceIndex {
  service: string;
  x402: { facilitator_url_path: string; endpoints: string[] };
  api: { reference: string; openapi: string; endpoints: string[] };
  pages: Array<{ path: string; title: string }>;
  operations: Array<{ path: string; title: string }>;
}

export function serviceIndex(queueDashboardOn: boolean): ServiceIndex {
  return {
    service: 'x402 facilitator: verifies x402 payments and settles them on-chain, collecting a fee from the merchant',
    x402: {
      facilitator_url_path: X402_PREFIX,
      endpoints: [`GET ${X402_PREFIX}/supported`, `POST ${X402_PREFIX}/verify`, `POST ${X402_PREFIX}/settle`],
    },
    api: { reference: '/docs', openapi: '/openapi.json', endpoints: ['POST /v1/verify', 'POST /v1/settle', 'GET /v1/settlements/{id}'] },
    pages: [
      { path: '/docs', title: 'API reference' },
      { path: '/status', title: 'service status' },
      { path: '/merchant', title: 'merchant page' },
      {
        path: ADMIN_QUEUES_PATH,
        title: queueDashboardOn ? 'queue dashboard (operators; basic auth)' : 'queue dashboard (off: set ADMIN_USERNAME and ADMIN_PASSWORD)',
      },
    ],
    operations: [
      { path: '/healthz', title: 'liveness' },
      { path: '/readyz', title: 'readiness' },
      { path: '/metrics', title: "the API's Prometheus metrics (settlement and fee figures are the worker's, on WORKER_METRICS_PORT)" },
      { path: '/v1/queues', title: 'queue state as JSON (operators: an API_KEYS key)' },
    ],
  };
}

function indexPage(index: ServiceIndex): string {
  const links = (items: Array<{ path: string; title: string }>) =>
    items.map(({ path, title }) => `<li><a href="${path}">${path}</a>: ${title}</li>`).join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>x402 facilitator</title></head>
<body>
<h1>x402 facilitator</h1>
<p>${index.service}.</p>
<p>x402 facilitator URL: <code>${index.x402.facilitator_url_path}</code> on this host (${index.x402.endpoints.join(', ')}).</p>
<h2>Pages</h2>
<ul>
${links(index.pages)}
</ul>
<h2>Operations</h2>
<ul>
${links(index.operations)}
</ul>
<p>This index as JSON: send <code>Accept: application/json</code>.</p>
</body></html>
`;
}

/**
 * `GET /`: a small index of what is served, so that the first request a newcomer makes is not a 404. JSON
 * unless the client prefers HTML (a browser): curl's `*\/*` gets JSON, as the rest of the API answers.
 */
export function serviceIndexRoutes(queueDashboardOn: boolean): Router {
  const router = apiRouter();
  const index = serviceIndex(queueDashboardOn);
  const page = indexPage(index);
  router.get('/', (req, res) => {
    res.vary('Accept');
    if (req.accepts(['json', 'html']) === 'html') res.type('html').send(page);
    else res.json(index);
  });
  return router;
}
