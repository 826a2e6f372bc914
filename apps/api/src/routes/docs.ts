import { Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import { apiRouter } from '../api-router';

/** The OpenAPI document and a rendered reference (Swagger UI, served from the package: no CDN). */
export function docsRoutes(document: object): Router {
  const router = apiRouter();
  router.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  // The page loads its assets relative to itself (./swagger-ui.css), which from /docs would mean
  // /swagger-ui.css: send /docs to /docs/. The Location is relative ("docs/"), so it still holds when a
  // proxy serves the API under a path prefix.
  router.get('/docs', (req, res, next) => {
    if (req.path !== '/docs') return next();
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    res.redirect(302, `docs/${query}`);
  });
  router.get('/docs/', swaggerUi.setup(document, { customSiteTitle: 'x402 facilitator API' }));
  router.use('/docs', swaggerUi.serve);
  return router;
}
