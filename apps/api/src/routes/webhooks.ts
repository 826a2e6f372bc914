import { Router } from 'express';
import { IdPrefix, InvalidRequestError, isId, NotFoundError } from '@facilitator/core';
import type { PrismaClient } from '@facilitator/db';
import type { WebhookOutbox } from '@facilitator/webhooks';
import { requireApiKey } from '../middleware/api-key';
import { webhookDeliveryRecord } from '../presenters/webhook';

export interface WebhookRouteDeps {
  apiKeys: readonly string[];
  prisma: PrismaClient;
  outbox: WebhookOutbox;
}

/** Operations on webhook deliveries: list them with their attempts, and send a failed one again. */
export function webhookRoutes(deps: WebhookRouteDeps): Router {
  const router = Router();
  const auth = requireApiKey(deps.apiKeys);

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
    const events = await deps.prisma.webhookEvent.findMany({
      where: {
        ...(typeof verificationId === 'string' ? { verificationId } : {}),
        ...(typeof settlementId === 'string' ? { settlementId } : {}),
      },
      include: { attempts: { orderBy: { number: 'asc' } } },
      orderBy: { createdAt: 'asc' },
      take: 100,
    });
    res.json({ deliveries: events.map(webhookDeliveryRecord) });
  });

  router.post('/v1/webhooks/deliveries/:id/redeliver', auth, async (req, res) => {
    const id = String(req.params.id);
    const event = isId(IdPrefix.WebhookEvent, id) ? await deps.prisma.webhookEvent.findUnique({ where: { id } }) : null;
    if (!event) throw new NotFoundError(`no webhook delivery with id ${JSON.stringify(id.slice(0, 64))}`);
    if (!(await deps.outbox.redeliver(id))) {
      throw new InvalidRequestError(`delivery ${id} is ${event.status}; only a failed delivery can be redelivered`);
    }
    const updated = await deps.prisma.webhookEvent.findUniqueOrThrow({ where: { id }, include: { attempts: { orderBy: { number: 'asc' } } } });
    res.status(202).json(webhookDeliveryRecord(updated));
  });
  return router;
}
