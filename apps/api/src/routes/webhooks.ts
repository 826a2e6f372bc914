import { Router } from 'express';
import { IdPrefix, InvalidRequestError, isId, NotFoundError } from '@facilitator/core';
import type { WebhookEventRepository } from '@facilitator/db';
import type { MerchantService } from '@facilitator/merchants';
import type { WebhookOutbox } from '@facilitator/webhooks';
import { accessOf, maySee, readAccess } from '../middleware/read-access';
import { webhookDeliveryRecord } from '../presenters/webhook';
import { apiRouter } from '../api-router';

export interface WebhookRouteDeps {
  apiKeys: readonly string[];
  events: WebhookEventRepository;
  outbox: WebhookOutbox;
  merchants: MerchantService;
}

/**
 * Operations on webhook deliveries: list them with their attempts, and send a failed one again. Never
 * open to the world: an operator API key sees all, a merchant's settle key its own events only.
 */
export function webhookRoutes(deps: WebhookRouteDeps): Router {
  const router = apiRouter();
  const auth = readAccess(deps.apiKeys, deps.merchants, false);

  router.get('/v1/webhooks/deliveries', auth, async (req, res) => {
    const verificationId = req.query.verification_id;
    const settlementId = req.query.settlement_id;
    if (typeof verificationId !== 'string' && typeof settlementId !== 'string') {
      throw new InvalidRequestError('give verification_id or settlement_id as a query parameter');
    }
    // a malformed id names no record (and must not reach Postgres, which refuses e.g. NUL characters)
    if ((typeof verificationId === 'string' && !isId(IdPrefix.Verification, verificationId)) || (typeof settlementId === 'string' && !isId(IdPrefix.Settlement, settlementId))) {
      res.json({ deliveries: [] });
      return;
    }
    const access = accessOf(req);
    const events = await deps.events.list(
      {
        ...(typeof verificationId === 'string' ? { verificationId } : {}),
        ...(typeof settlementId === 'string' ? { settlementId } : {}),
        ...(access.kind === 'merchant' ? { merchant: access.merchant } : {}),
      },
      100,
    );
    res.json({ deliveries: events.map(webhookDeliveryRecord) });
  });

  router.post('/v1/webhooks/deliveries/:id/redeliver', auth, async (req, res) => {
    const id = String(req.params.id);
    const event = isId(IdPrefix.WebhookEvent, id)
      ? await deps.events.findWithMerchant(id)
      : null;
    if (!event || !maySee(accessOf(req), event.verification?.merchant ?? null)) throw new NotFoundError(`no webhook delivery with id ${JSON.stringify(id.slice(0, 64))}`);
    if (!(await deps.outbox.redeliver(id))) {
      throw new InvalidRequestError(`delivery ${id} is ${event.status}; only a failed delivery can be redelivered`);
    }
    const updated = await deps.events.findWithAttempts(id);
    res.status(202).json(webhookDeliveryRecord(updated!));
  });
  return router;
}
