import { Router } from 'express';
import swaggerUi from 'swagger-ui-express';

/** The OpenAPI document and a rendered reference (Swagger UI, served from the package: no CDN). */
export function docsRoutes(document: object): Router {
  const router = Router();
  router.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  // the page before the static assets, which would otherwise redirect /docs to /docs/
  router.get('/docs', swaggerUi.setup(document, { customSiteTitle: 'x402 facilitator API' }));
  router.use('/docs', swaggerUi.serve);
  return router;
}
