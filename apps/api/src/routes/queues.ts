import { Router, type RequestHandler } from 'express';
import { UnauthorizedError } from '@facilitator/core';
import type { SettlementPages } from '@facilitator/db';
import type { Queues } from '@facilitator/queue';
import { snapshotQueue } from '@facilitator/metrics';
import { validateResolveSettlement } from '@facilitator/schemas';
import type { OperatorActions } from '@facilitator/settlement';
import { requireApiKey } from '../middleware/api-key';
import { jsonObjectBody } from '../request-body';
import { apiRouter } from '../api-router';

export interface QueueRouteDeps {
  queues: Queues;
  apiKeys: readonly string[];
  settlements: SettlementPages;
  operator: OperatorActions;
}

/** How many parked settlements /v1/queues lists (the count covers them all). */
const ATTENTION_LISTED = 20;

/**
 * Operator actions move money state, and the queues' view lists parked settlements with their internal error
 * text: never open to the world, even when API_KEYS is unset.
 */
function requireOperatorKey(apiKeys: readonly string[]): RequestHandler {
  const check = requireApiKey(apiKeys);
  return (req, res, next) => (apiKeys.length === 0 ? next(new UnauthorizedError('operator routes need API_KEYS to be configured')) : check(req, res, next));
}

/** Queue state as JSON, for dashboards that do not speak Prometheus, and the operator's actions on parked settlements. */
export function queueRoutes(deps: QueueRouteDeps): Router {
  const router = apiRouter();
  router.get('/v1/queues', requireOperatorKey(deps.apiKeys), async (_req, res) => {
    const [snapshots, count, parked] = await Promise.all([
      Promise.all([deps.queues.settlement, deps.queues.webhook, deps.queues.maintenance].map(snapshotQueue)),
      deps.settlements.countNeedingAttention(),
      deps.settlements.findNeedingAttention(ATTENTION_LISTED),
    ]);
    res.json({
      queues: snapshots.map((s) => ({ name: s.name, counts: s.counts, oldest_waiting_age_seconds: s.oldestWaitingAgeSeconds })),
      settlements_needing_attention: {
        count,
        oldest: parked.map((s) => ({ id: s.id, state: s.state, reason: s.attentionReason, since: s.attentionAt?.toISOString() })),
        actions: ['POST /v1/settlements/{id}/retry', 'POST /v1/settlements/{id}/resolve'],
      },
      at: new Date().toISOString(),
    });
  });
  router.post('/v1/settlements/:id/retry', requireOperatorKey(deps.apiKeys), async (req, res) => {
    const settlement = await deps.operator.retry(String(req.params.id));
    res.json({ id: settlement.id, state: settlement.state, requeued: true });
  });
  router.post('/v1/settlements/:id/resolve', requireOperatorKey(deps.apiKeys), jsonObjectBody(), async (req, res) => {
    const body = validateResolveSettlement(req.body);
    const settlement = await deps.operator.resolve(String(req.params.id), { outcome: body.outcome, note: body.note, txHash: body.tx_hash?.toLowerCase() });
    res.json({ id: settlement.id, state: settlement.state, resolved: true });
  });
  return router;
}
