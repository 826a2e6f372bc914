import { Router } from 'express';
import type { Queues } from '@facilitator/queue';
import { snapshotQueue } from '@facilitator/metrics';
import { requireApiKey } from '../middleware/api-key';

/** Queue state as JSON, for dashboards that do not speak Prometheus. */
export function queueRoutes(queues: Queues, apiKeys: readonly string[]): Router {
  const router = Router();
  router.get('/v1/queues', requireApiKey(apiKeys), async (_req, res) => {
    const snapshots = await Promise.all([queues.settlement, queues.webhook].map(snapshotQueue));
    res.json({
      queues: snapshots.map((s) => ({ name: s.name, counts: s.counts, oldest_waiting_age_seconds: s.oldestWaitingAgeSeconds })),
      at: new Date().toISOString(),
    });
  });
  return router;
}
