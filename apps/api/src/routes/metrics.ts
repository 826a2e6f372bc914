import { Router } from 'express';
import type { Metrics } from '@facilitator/metrics';
import { metricsSource } from '../cluster-metrics';
import { apiRouter } from '../api-router';

export function metricsRoutes(metrics: Metrics): Router {
  const router = apiRouter();
  const metricsText = metricsSource(metrics.registry);
  router.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metricsText());
  });
  return router;
}
