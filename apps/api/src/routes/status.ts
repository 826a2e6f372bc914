import { Router } from 'express';
import { IdPrefix, isId, NotFoundError } from '@facilitator/core';
import type { SettlementLookups, VerificationRepository } from '@facilitator/db';
import type { MerchantService } from '@facilitator/merchants';
import { accessOf, maySee, readAccess } from '../middleware/read-access';
import { settlementStatusRecord } from '../presenters/settlement';
import { verificationStatusRecord } from '../presenters/verification';
import { apiRouter } from '../api-router';

export interface StatusRouteDeps {
  apiKeys: readonly string[];
  verifications: VerificationRepository;
  settlements: SettlementLookups;
  merchants: MerchantService;
}

/** Status records: open unless API_KEYS is set; a merchant's settle key reads its own (another's is "not found"). */
export function statusRoutes(deps: StatusRouteDeps): Router {
  const router = apiRouter();
  const auth = readAccess(deps.apiKeys, deps.merchants, true);
  router.get('/v1/verifications/:id', auth, async (req, res) => {
    const id = String(req.params.id);
    const record = isId(IdPrefix.Verification, id) ? await deps.verifications.findById(id) : null;
    if (!record || !maySee(accessOf(req), record.merchant)) throw new NotFoundError(`no verification with id ${JSON.stringify(id.slice(0, 64))}`);
    const settled = await deps.settlements.findSettledForVerification(record.id);
    res.json(verificationStatusRecord(record, settled?.settlementTxHash ?? null));
  });
  router.get('/v1/settlements/:id', auth, async (req, res) => {
    const id = String(req.params.id);
    const record = isId(IdPrefix.Settlement, id) ? await deps.settlements.findById(id) : null;
    if (!record || !maySee(accessOf(req), record.merchant)) throw new NotFoundError(`no settlement with id ${JSON.stringify(id.slice(0, 64))}`);
    res.json(settlementStatusRecord(record));
  });
  return router;
}
