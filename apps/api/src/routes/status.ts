import { Router } from 'express';
import { IdPrefix, isId, NotFoundError } from '@facilitator/core';
import type { SettlementRepository, VerificationRepository } from '@facilitator/db';
import { requireApiKey } from '../middleware/api-key';
import { settlementStatusRecord } from '../presenters/settlement';
import { verificationStatusRecord } from '../presenters/verification';

export interface StatusRouteDeps {
  apiKeys: readonly string[];
  verifications: VerificationRepository;
  settlements: SettlementRepository;
}

export function statusRoutes(deps: StatusRouteDeps): Router {
  const router = Router();
  const auth = requireApiKey(deps.apiKeys);
  router.get('/v1/verifications/:id', auth, async (req, res) => {
    const id = String(req.params.id);
    const record = isId(IdPrefix.Verification, id) ? await deps.verifications.findById(id) : null;
    if (!record) throw new NotFoundError(`no verification with id ${JSON.stringify(id.slice(0, 64))}`);
    const settled = await deps.settlements.findSettledForVerification(record.id);
    res.json(verificationStatusRecord(record, settled?.settlementTxHash ?? null));
  });
  router.get('/v1/settlements/:id', auth, async (req, res) => {
    const id = String(req.params.id);
    const record = isId(IdPrefix.Settlement, id) ? await deps.settlements.findById(id) : null;
    if (!record) throw new NotFoundError(`no settlement with id ${JSON.stringify(id.slice(0, 64))}`);
    res.json(settlementStatusRecord(record));
  });
  return router;
}
