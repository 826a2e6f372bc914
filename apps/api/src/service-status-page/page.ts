import { createHash } from 'node:crypto';
import { PAGE_SCRIPT } from './page-script';
import { PAGE_STYLE } from './page-style';

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** The whole page, one constant: serving it costs a write, whatever the load. */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Service status · x402 facilitator</title>
<link rel="icon" href="data:,">
<style>${PAGE_STYLE}</style>
</head>
<body>
<header>
  <h1>Service status</h1>
  <div class="meta">Figures computed <strong id="computed-at" data-value="">…</strong> from the service's own records. Latency p50 and p95 over the last 5 minutes, hour and day; <span id="refresh-note">refreshed automatically</span>.</div>
</header>
<div id="problem" role="alert" hidden></div>
<main id="networks" aria-live="polite"></main>
<footer>The same figures as JSON: <a href="status.json">status.json</a> · <a href="docs/">API reference</a></footer>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;

/**
 * Nothing but this page's own inline style and script (by hash) and its own origin's JSON: a browser refuses
 * anything else, so no request of this page can leave the host it came from.
 */
export const STATUS_PAGE_HEADERS = {
  'Content-Security-Policy': [
    "default-src 'none'",
    `script-src ${sha256(PAGE_SCRIPT)}`,
    `style-src ${sha256(PAGE_STYLE)}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'public, max-age=300',
};
