import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { serviceIndexRoutes } from './service-index';

/** Serves `GET /` of an app on a free port for one request: what a client sees, headers included. */
async function get(queueDashboardOn: boolean, accept?: string) {
  const server = await new Promise<Server>((resolve) => {
    const s = express().use(serviceIndexRoutes(queueDashboardOn)).listen(0, '127.0.0.1', () => resolve(s));
  });
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers: accept ? { Accept: accept } : {} });
    const text = await res.text();
    const type = (res.headers.get('content-type') ?? '').split(';')[0];
    return { status: res.status, type, vary: res.headers.get('vary') ?? '', text, body: type === 'application/json' ? JSON.parse(text) : undefined };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('GET /', () => {
  it('answers JSON to an API client (Accept: application/json, */* as curl sends, or none): the facilitator URL, the API, the pages', async () => {
    // fetch sends `*/*` when no Accept is given
    for (const accept of ['application/json', '*/*', undefined]) {
      const res = await get(true, accept);
      expect({ accept, status: res.status, type: res.type }).toEqual({ accept, status: 200, type: 'application/json' });
      expect(res.vary).toContain('Accept');
      expect(res.body.x402).toEqual({ facilitator_url_path: '/x402', endpoints: ['GET /x402/supported', 'POST /x402/verify', 'POST /x402/settle'] });
      expect(res.body.pages.map((p: { path: string }) => p.path)).toEqual(['/docs', '/status', '/merchant', '/admin/queues']);
      expect(res.body.operations.map((p: { path: string }) => p.path)).toEqual(['/healthz', '/readyz', '/metrics', '/v1/queues']);
    }
  });

  it('answers a small HTML page linking each page to a browser', async () => {
    const res = await get(true, BROWSER_ACCEPT);
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/html');
    for (const page of ['/docs', '/status', '/merchant', '/admin/queues', '/metrics']) expect(res.text).toContain(`<a href="${page}">${page}</a>`);
    expect(res.text).toContain('<code>/x402</code>');
  });

  it('says the queue dashboard is off when no credentials turn it on', async () => {
    const res = await get(false);
    expect(res.body.pages[3]).toEqual({ path: '/admin/queues', title: 'queue dashboard (off: set ADMIN_USERNAME and ADMIN_PASSWORD)' });
  });
});
