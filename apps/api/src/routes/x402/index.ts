import { Router, type Response } from 'express';
import { getAddress } from 'ethers';
import { FacilitatorError, NotFoundError } from '@facilitator/core';
import type { SettlementRepository, Verification, VerificationRepository } from '@facilitator/db';
import type { Logger } from '@facilitator/logging';
import type { SettlementRequests } from '@facilitator/settlement';
import {
  EnabledNetworks,
  parseX402Request,
  X402_V1_NETWORK_NAMES,
  x402InvalidMessageOf,
  x402InvalidReasonOf,
  X402Reason,
  X402RequestRejected,
  x402RequestEcho,
  x402SettleFailureOf,
  X402Verifier,
  type X402Payment,
} from '@facilitator/verification';
import {
  x402SettleFailed,
  x402SettleSucceeded,
  x402VerifyInvalid,
  x402VerifyValid,
  type X402SupportedResponse,
} from '../../presenters/x402';
import type { SettlementWaiter } from '../../settlement-waiter';
import { findVerificationOf } from '../settle';

/** Merchants set their x402 middleware's facilitator URL to `https://<host>/x402`. */
export const X402_PREFIX = '/x402';

export interface X402RouteDeps {
  networks: EnabledNetworks;
  verifier: X402Verifier;
  verifications: VerificationRepository;
  settlements: SettlementRepository;
  requests: SettlementRequests;
  /** the process's shared settle waiter (bounded, one poller) */
  waits: SettlementWaiter;
  /** the addresses that send our transactions (relayers and the treasury), published by /supported */
  signers: readonly string[];
  logger: Logger;
}

/** Header naming the stored record of an x402 answer, for support; the middleware ignores it. */
export const VERIFICATION_ID_HEADER = 'X-Verification-Id';
export const SETTLEMENT_ID_HEADER = 'X-Settlement-Id';

/**
 * The standard x402 facilitator API — `POST /verify`, `POST /settle`, `GET /supported` — over the same
 * engine as /v1: the same checks and records, the same fee-first settlement in the worker, the same
 * one-settlement-per-payment idempotency. Outcomes (valid or not, settled or not) are HTTP 200 with the
 * standard body, as the reference facilitator answers; a request we cannot read is 400 and a failure of
 * ours 5xx, each still in the standard shape, so every x402 client can report it.
 */
export function x402Routes(deps: X402RouteDeps): Router {
  const router = Router();

  router.get(`${X402_PREFIX}/supported`, (_req, res) => {
    res.json(supportedOf(deps.networks, deps.signers));
  });

  router.post(`${X402_PREFIX}/verify`, async (req, res) => {
    try {
      const x = parseX402Request(req.body, deps.networks);
      const { record, failure } = await deps.verifier.verify(x);
      res.setHeader(VERIFICATION_ID_HEADER, record.id);
      if (failure) res.json(x402VerifyInvalid(x402InvalidReasonOf(failure), x402InvalidMessageOf(failure), x.payer));
      else res.json(x402VerifyValid(x.payer));
    } catch (err) {
      const echo = x402RequestEcho(req.body);
      const { status, reason, message } = problemOf(err, X402Reason.UnexpectedVerifyError, deps.logger);
      res.status(status).json(x402VerifyInvalid(reason, message, echo.payer));
    }
  });

  router.post(`${X402_PREFIX}/settle`, async (req, res) => {
    try {
      await settle(deps, parseX402Request(req.body, deps.networks), res);
    } catch (err) {
      const echo = x402RequestEcho(req.body);
      const { status, reason, message } = problemOf(err, X402Reason.UnexpectedSettleError, deps.logger);
      res.status(status).json(x402SettleFailed(reason, message, echo.payer, echo.network));
    }
  });

  return router;
}

/**
 * Settles like Form A of /v1/settle, waiting for the worker's outcome. A payment that was never verified
 * (the x402 "upfront" flow, or a client that skips /verify) is verified here first, as x402 facilitators
 * re-verify at settle; a payment settled before answers with its first result.
 */
async function settle(deps: X402RouteDeps, x: X402Payment, res: Response): Promise<void> {
  const failed = (reason: string, message: string, transaction?: string) =>
    res.json(x402SettleFailed(reason, message, x.payer, x.network, transaction));

  const refused = await deps.verifier.checkRequirements(x);
  if (refused) {
    failed(x402InvalidReasonOf(refused), x402InvalidMessageOf(refused));
    return;
  }
  let verification: Verification;
  try {
    verification = await findVerificationOf(deps.verifications, x.payment);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    const outcome = await deps.verifier.verify(x);
    res.setHeader(VERIFICATION_ID_HEADER, outcome.record.id);
    if (outcome.failure) {
      failed(x402InvalidReasonOf(outcome.failure), x402InvalidMessageOf(outcome.failure));
      return;
    }
    verification = outcome.record;
  }

  const { settlement } = await deps.requests.start(verification, 'x402');
  const outcome = await deps.waits.waitForFinal(settlement);
  res.setHeader(SETTLEMENT_ID_HEADER, outcome.id);
  if (outcome.state === 'settled') {
    res.json(x402SettleSucceeded(outcome, x.payer, x.network));
  } else if (outcome.state === 'failed') {
    const { errorReason, errorMessage } = x402SettleFailureOf(outcome);
    failed(errorReason, errorMessage);
  } else {
    // still running in the worker: the reference facilitator's non-terminal code, which the x402
    // middleware retries once with the same payload; our idempotency makes that retry wait again
    failed(
      X402Reason.SettlementPending,
      `settlement ${outcome.id} is still in progress (state ${outcome.state}); settle the same payment again for its outcome`,
      outcome.settlementTxHash ?? '',
    );
  }
}

function problemOf(err: unknown, unexpected: X402Reason, logger: Logger): { status: number; reason: string; message: string } {
  if (err instanceof X402RequestRejected) return { status: 400, reason: err.reason, message: err.message };
  // e.g. the chain's RPC did not answer (503): our problem, retryable, not an invalid payment
  if (err instanceof FacilitatorError) return { status: err.status, reason: unexpected, message: err.message };
  logger.error('x402 request failed', { err });
  return { status: 500, reason: unexpected, message: 'internal error' };
}

function supportedOf(networks: EnabledNetworks, signers: readonly string[]): X402SupportedResponse {
  const kinds: X402SupportedResponse['kinds'] = [];
  for (const network of networks.all) {
    kinds.push({ x402Version: 2, scheme: 'exact', network: network.caip2 });
    const v1Name = X402_V1_NETWORK_NAMES[network.chainId];
    if (v1Name) kinds.push({ x402Version: 1, scheme: 'exact', network: v1Name });
  }
  const unique = [...new Set(signers.map((s) => s.toLowerCase()))].map((s) => getAddress(s));
  return { kinds, extensions: [], signers: { 'eip155:*': unique } };
}
