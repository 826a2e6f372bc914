import { Router } from 'express';
import type { Metrics } from '@facilitator/metrics';
import { metricsSource } from '../cluster-metrics';

export function metricsRoutes(metrics: Metrics): Router {
  const router = Router();
  const metricsText = metricsSource(metrics.registry);
  router.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metricsText());
  });
  return router;
}
