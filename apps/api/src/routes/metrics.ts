import { Router } from 'express';
import type { Metrics } from '@facilitator/metrics';
import { metricsText } from '../cluster-metrics';

export function metricsRoutes(metrics: Metrics): Router {
  const router = Router();
  router.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metricsText(metrics.registry));
  });
  return router;
}
