import { VerificationFailedError } from '@facilitator/core';
import type { EnabledNetworks } from '@facilitator/verification';
import { bearerKey } from '../bearer-key';
import { formASettlementPending, formASettlementResult, formBSettlementCreated } from '../presenters/settlement';
import { apiRouter } from '../api-router';
import { parseV1SettleCommand, settleRequestKey } from '../settle-intake/settle-command';
import { SettleRefused, type SettleIntake } from '../settle-intake/settle-intake';
import { settlementError } from '../settlement-outcome';
import type { SettlementWaiter } from '../settlement-waiter';

export interface SettleRouteDeps {
  networks: EnabledNetworks;
  /** the one settle intake, shared with /x402/settle */
  intake: SettleIntake;
  /** the process's shared settle waiter (bounded, one poller) */
  waits: SettlementWaiter;
}

/** POST /v1/settle: Form A waits for the outcome (or 202 pending); Form B answers `pending` at once. */
export function settleRoutes(deps: SettleRouteDeps) {
  const router = apiRouter();
  router.post('/v1/settle', async (req, res) => {
    const command = parseV1SettleCommand(req.body, deps.networks);
    // repeats of one payment beyond what waits for it are refused before any database work
    const leave = deps.waits.enter(settleRequestKey(command));
    res.once('close', leave);
    const { settlement } = await deps.intake.admit(command, bearerKey(req)).catch((err: unknown) => {
      if (err instanceof SettleRefused) {
        const { message, details } = err.failure;
        throw new VerificationFailedError(message, { ...details, ...(err.verificationId ? { verification_id: err.verificationId } : {}) });
      }
      throw err;
    });
    // only an x402 upto payment can settle nothing; Form A and Form B are EIP-3009's, which moves its value
    if (!settlement) throw new Error('a /v1 settle admitted a payment with nothing to settle');
    if (command.kind === 'form-b') {
      res.json(formBSettlementCreated(settlement));
      return;
    }
    const { settlement: outcome } = await deps.waits.waitForFinal(settlement);
    if (outcome.state === 'settled') res.json(formASettlementResult(outcome));
    else if (outcome.state === 'failed') throw settlementError(outcome);
    else res.status(202).json(formASettlementPending(outcome));
  });
  return router;
}
