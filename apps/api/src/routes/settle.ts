import { Router } from 'express';
import { InvalidRequestError, NotFoundError, VerificationFailedError } from '@facilitator/core';
import type { SettlementRepository, Verification, VerificationRepository } from '@facilitator/db';
import { validateSettleFormA, validateSettleFormB } from '@facilitator/schemas';
import type { SettlementRequests } from '@facilitator/settlement';
import { EnabledNetworks, Payment, paymentFromFormA } from '@facilitator/verification';
import { formASettlementPending, formASettlementResult, formBSettlementCreated } from '../presenters/settlement';
import { settlementError } from '../settlement-outcome';
import type { SettlementWaiter } from '../settlement-waiter';
import { isFormA, jsonObjectBody } from '../request-body';

export interface SettleRouteDeps {
  networks: EnabledNetworks;
  verifications: VerificationRepository;
  settlements: SettlementRepository;
  requests: SettlementRequests;
  /** the process's shared settle waiter (bounded, one poller) */
  waits: SettlementWaiter;
}

/** The successful verification of exactly this payment: same authorization, signature and requirements. */
export async function findVerificationOf(verifications: VerificationRepository, payment: Payment): Promise<Verification> {
  const { network, authorization: a, expected } = payment;
  const found = await verifications.findLatestVerified(network.chainId, network.tokenAddress, a.from, a.nonce);
  const matches =
    found !== null &&
    found.merchant === expected.payTo &&
    found.expectedAmount === expected.amount.toString() &&
    found.amount === a.value.toString() &&
    found.validAfter === a.validAfter.toString() &&
    found.validBefore === a.validBefore.toString() &&
    found.signature === payment.signature;
  if (!matches) throw new NotFoundError('no successful verification of this payment; call POST /v1/verify first');
  return found;
}

export function settleRoutes(deps: SettleRouteDeps): Router {
  const router = Router();
  router.post('/v1/settle', jsonObjectBody(), async (req, res) => {
    const body = req.body as Record<string, unknown>;
    if (!isFormA(body)) {
      const { verification_id, destination_address } = validateSettleFormB(body);
      const verification = await deps.verifications.findById(verification_id);
      if (!verification) throw new NotFoundError(`no verification with id ${JSON.stringify(verification_id)}`);
      if (verification.status !== 'verified') {
        throw new VerificationFailedError('only a verified payment can be settled', {
          verification_id,
          reason: verification.failureMessage ?? 'verification was rejected',
        });
      }
      if (destination_address.toLowerCase() !== verification.merchant) {
        throw new InvalidRequestError('destination_address must be the verified merchant: the signed authorization fixes the recipient', {
          errors: [{ path: '/destination_address', message: `must be ${verification.merchant}` }],
        });
      }
      const { settlement } = await deps.requests.start(verification, 'v1');
      res.json(formBSettlementCreated(settlement));
      return;
    }
    const payment = paymentFromFormA(validateSettleFormA(body), deps.networks, 'v1');
    const verification = await findVerificationOf(deps.verifications, payment);
    const { settlement } = await deps.requests.start(verification, 'v1');
    const outcome = await deps.waits.waitForFinal(settlement);
    if (outcome.state === 'settled') res.json(formASettlementResult(outcome));
    else if (outcome.state === 'failed') throw settlementError(outcome);
    else res.status(202).json(formASettlementPending(outcome));
  });
  return router;
}
