import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { Router } from 'express';
import { NotFoundError } from '@facilitator/core';
import type { Queues } from '@facilitator/queue';
import { basicAuth } from '../middleware/basic-auth';
import { SelfContainedExpressAdapter } from './self-contained-bull-board';
import { apiRouter } from '../api-router';

export const ADMIN_QUEUES_PATH = '/admin/queues';

/**
 * Bull Board for every queue (settlement, webhook, maintenance): operators see waiting, active, delayed and failed
 * jobs and can retry a failed one. Off unless ADMIN_USERNAME/ADMIN_PASSWORD are set, and says so.
 */
export function adminQueueRoutes(queues: Queues, admin: { username: string; password: string } | undefined): Router {
  const router = apiRouter();
  if (!admin) {
    router.use(ADMIN_QUEUES_PATH, (_req, _res, next) =>
      next(new NotFoundError('the queue dashboard is off: set ADMIN_USERNAME and ADMIN_PASSWORD to turn it on')),
    );
    return router;
  }
  const serverAdapter = new SelfContainedExpressAdapter();
  serverAdapter.setBasePath(ADMIN_QUEUES_PATH);
  createBullBoard({ queues: [queues.settlement, queues.webhook, queues.maintenance].map((queue) => new BullMQAdapter(queue)), serverAdapter });
  router.use(ADMIN_QUEUES_PATH, basicAuth(admin, 'x402 facilitator queues'), serverAdapter.getRouter());
  return router;
}
