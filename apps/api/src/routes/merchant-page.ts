import type { Response, Router } from 'express';
import { apiRouter } from '../api-router';
import { MERCHANT_PAGE_HTML } from '../merchant-page/page-html';
import { MERCHANT_PAGE_JS } from '../merchant-page/page-script';
import { MERCHANT_PAGE_CSS } from '../merchant-page/page-style';

/**
 * The page may load only its own script and style and talk only to this API: an injected value can run
 * nothing (no inline script), and nothing can leave for another host. Not framed (clickjacking of the
 * rotate button), not cached (it holds a session while open).
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function send(res: Response, type: string, body: string): void {
  res
    .set({ 'Content-Security-Policy': CONTENT_SECURITY_POLICY, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-store' })
    .type(type)
    .send(body);
}

/** The merchant's own page (GET /merchant), self-contained: its two assets are served here. */
export function merchantPageRoutes(): Router {
  const router = apiRouter();
  router.get('/merchant', (_req, res) => send(res, 'html', MERCHANT_PAGE_HTML));
  router.get('/merchant/page.js', (_req, res) => send(res, 'text/javascript', MERCHANT_PAGE_JS));
  router.get('/merchant/page.css', (_req, res) => send(res, 'text/css', MERCHANT_PAGE_CSS));
  return router;
}
