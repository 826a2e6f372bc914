import { createHash } from 'node:crypto';
import { Router } from 'express';
import type { ServiceStatus } from '@facilitator/schemas';
import type { ServiceStatusReader } from '@facilitator/service-status';
import { apiRouter } from '../api-router';
import { STATUS_PAGE_HEADERS, STATUS_PAGE_HTML } from '../service-status-page/page';

const PAGE_ETAG = `"${createHash('sha256').update(STATUS_PAGE_HTML).digest('base64url').slice(0, 27)}"`;

/**
 * The public status page (/status) and its JSON (/status.json): aggregates only, open to anyone, never
 * rate-limited. Not /v1/status: the /v1 settlement and verification records are "status records" already.
 * Every visitor is served the one cached computation, serialized once (ServiceStatusReader).
 */
export function serviceStatusRoutes(reader: Pick<ServiceStatusReader, 'current'>, maxAgeMs: number): Router {
  const router = apiRouter();
  const serialized = new WeakMap<ServiceStatus, string>();
  const cacheControl = `public, max-age=${Math.floor(maxAgeMs / 1000)}`;
  router.get('/status.json', async (_req, res) => {
    const status = await reader.current();
    let body = serialized.get(status);
    if (body === undefined) serialized.set(status, (body = JSON.stringify(status)));
    res.set('Cache-Control', cacheControl).type('json').send(body);
  });
  router.get('/status', (_req, res) => {
    // a precomputed ETag: Express would otherwise hash the page on every request
    res.set(STATUS_PAGE_HEADERS).set('ETag', PAGE_ETAG).type('html').send(STATUS_PAGE_HTML);
  });
  return router;
}
