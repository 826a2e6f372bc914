import express from 'express';
import supertest from 'supertest';
import { serviceIndexRoutes } from './service-index';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describe('GET /', () => {
  const app = express().use(serviceIndexRoutes(true));

  it('answers JSON to an API client (Accept: application/json, */* as curl sends, or none): the facilitator URL, the API, the pages', async () => {
    for (const accept of ['application/json', '*/*', undefined]) {
      const request = supertest(app).get('/');
      const res = await (accept ? request.set('Accept', accept) : request);
      expect({ accept, status: res.status, type: res.type }).toEqual({ accept, status: 200, type: 'application/json' });
      expect(res.headers.vary).toContain('Accept');
      expect(res.body.x402).toEqual({ facilitator_url_path: '/x402', endpoints: ['GET /x402/supported', 'POST /x402/verify', 'POST /x402/settle'] });
      expect(res.body.pages.map((p: { path: string }) => p.path)).toEqual(['/docs', '/status', '/merchant', '/admin/queues']);
      expect(res.body.operations.map((p: { path: string }) => p.path)).toEqual(['/healthz', '/readyz', '/metrics', '/v1/queues']);
    }
  });

  it('answers a small HTML page linking each page to a browser', async () => {
    const res = await supertest(app).get('/').set('Accept', BROWSER_ACCEPT);
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/html');
    for (const page of ['/docs', '/status', '/merchant', '/admin/queues', '/metrics']) expect(res.text).toContain(`<a href="${page}">${page}</a>`);
    expect(res.text).toContain('<code>/x402</code>');
  });

  it('says the queue dashboard is off when no credentials turn it on', async () => {
    const res = await supertest(express().use(serviceIndexRoutes(false))).get('/');
    expect(res.body.pages[3]).toEqual({ path: '/admin/queues', title: 'queue dashboard (off: set ADMIN_USERNAME and ADMIN_PASSWORD)' });
  });
});
