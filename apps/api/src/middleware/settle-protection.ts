import { Router, type Request } from 'express';
import { UnauthorizedError } from '@facilitator/core';
import type { VerificationRepository } from '@facilitator/db';
import type { MerchantService } from '@facilitator/merchants';
import { isJsonObject } from '../request-body';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** `Authorization: Bearer <key>`, as @x402/core's HTTPFacilitatorClient sends it through createAuthHeaders. */
export function bearerKey(req: Request): string | undefined {
  const match = /^Bearer\s+(\S{1,256})\s*$/i.exec(req.get('authorization') ?? '');
  return match?.[1];
}

const addressOf = (value: unknown) => (typeof value === 'string' && ADDRESS.test(value) ? value.toLowerCase() : undefined);

/**
 * The merchant a settle body pays, read the way the settle routes read it: Form A's `requirements.payTo`,
 * Form B's verification's merchant, x402's `paymentRequirements.payTo` (which the route requires the
 * authorization and `accepted` to match). Undefined when the body names none: the route refuses it.
 */
async function merchantOfSettle(req: Request, verifications: VerificationRepository): Promise<string | undefined> {
  const body: unknown = req.body;
  if (!isJsonObject(body)) return undefined;
  if (req.path.startsWith('/x402')) return isJsonObject(body.paymentRequirements) ? addressOf(body.paymentRequirements.payTo) : undefined;
  if ('payment' in body || 'requirements' in body) return isJsonObject(body.requirements) ? addressOf(body.requirements.payTo) : undefined;
  if (typeof body.verification_id !== 'string' || !/^ver_[0-9a-f]{32}$/.test(body.verification_id)) return undefined;
  return (await verifications.findById(body.verification_id))?.merchant ?? undefined;
}

/**
 * Settle protection, opted into by a merchant: settles of payments to it need its settle key. Runs
 * before the settle routes, so without the key nothing is enqueued and nothing is sent on chain.
 * Verify stays open to all.
 */
export function settleProtection(deps: { merchants: MerchantService; verifications: VerificationRepository }) {
  const router = Router();
  const refusal = (merchant: string) => `settle protection is on for ${merchant}: send its settle key as Authorization: Bearer <key>`;
  router.post('/v1/settle', async (req, _res, next) => {
    const merchant = await merchantOfSettle(req, deps.verifications);
    if (merchant !== undefined && (await deps.merchants.settleAccess(merchant, bearerKey(req))) === 'denied') throw new UnauthorizedError(refusal(merchant));
    next();
  });
  router.post('/x402/settle', async (req, res, next) => {
    const merchant = await merchantOfSettle(req, deps.verifications);
    if (merchant !== undefined && (await deps.merchants.settleAccess(merchant, bearerKey(req))) === 'denied') {
      // the x402 settle shape, so the middleware can report it
      const body = req.body as Record<string, unknown>;
      const requirements = body.paymentRequirements as Record<string, unknown>;
      res.status(401).json({ success: false, errorReason: 'unauthorized', errorMessage: refusal(merchant), payer: '', transaction: '', network: String(requirements.network ?? '') });
      return;
    }
    next();
  });
  return router;
}
