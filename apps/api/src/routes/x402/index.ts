import type { Settlement } from '@facilitator/db';
import type { Request, Response } from 'express';
import { getAddress } from 'ethers';
import { CHAIN_FAMILIES, ErrorCode, FacilitatorError, networkByChainId, PaymentConflictError, PaymentIdentifierConflictError, RateLimitedError } from '@facilitator/core';
import { mechanismById, mechanismsInVersion, type MechanismAvailability, type PaymentMechanismId } from '@facilitator/payment-mechanisms';
import { PAYMENT_IDENTIFIER } from '@facilitator/schemas';
import type { Logger } from '@facilitator/logging';
import {
  EnabledNetworks,
  FailureReason,
  parseX402Request,
  x402InvalidMessageOf,
  x402InvalidReasonOf,
  X402Reason,
  X402RequestRejected,
  x402RequestEcho,
  x402SettleFailureOf,
  X402Verifier,
} from '@facilitator/verification';
import {
  x402SettleFailed,
  x402SettledNothing,
  x402SettleSucceeded,
  x402VerifyInvalid,
  x402VerifyValid,
  type X402SupportedResponse,
} from '../../presenters/x402';
import { apiRouter } from '../../api-router';
import { bearerKey } from '../../bearer-key';
import { parseX402SettleCommand, settleRequestKey } from '../../settle-intake/settle-command';
import { SettleKeyRequired, SettleRefused, type SettleIntake } from '../../settle-intake/settle-intake';
import { x402SettleOutcome, type X402SettleOutcomeDeps } from '../../x402-settle-outcome';
import { BAZAAR, bazaarResponseOf, extensionResponsesHeader, readDeclaration, takeDeclaration, type DeclarationIntake } from '@facilitator/discovery';
import type { DiscoveryCatalog, DeclarationLimits } from '@facilitator/discovery';

/** Merchants set their x402 middleware's facilitator URL to `https://<host>/x402`. */
export const X402_PREFIX = '/x402';

export interface X402RouteDeps {
  networks: EnabledNetworks;
  /** which mechanisms each network serves (their contracts exist there): /supported lists only those */
  availability: Pick<MechanismAvailability, 'servedOn'>;
  verifier: X402Verifier;
  /** the one settle intake, shared with /v1/settle */
  intake: SettleIntake;
  /** how a settle request waits: final, or pending with its transaction's hash, or stopped before anything is sent */
  outcome: X402SettleOutcomeDeps;
  /** the addresses that send our transactions (relayers and the treasury), published by /supported */
  signers: readonly string[];
  /** the treasury: the one sender of a payment whose payer names it (upto's facilitator, `extra.facilitatorAddress`) */
  treasury: string;
  logger: Logger;
  /** the x402 bazaar catalog (issue 45): declarations read at verify and settle, recorded for the indexer at settle */
  discovery?: { catalog: DiscoveryCatalog; limits: DeclarationLimits };
}

/** The header x402 facilitators report extension outcomes in (base64 JSON keyed by extension). */
export const EXTENSION_RESPONSES_HEADER = 'EXTENSION-RESPONSES';

/**
 * The payment's bazaar declaration, taken out of the body before anything reads it (a bad declaration can
 * never fail the payment) and checked; `none` when there is none or the catalog is off.
 */
function declarationOf(deps: X402RouteDeps, req: Request): DeclarationIntake {
  if (!deps.discovery) return { kind: 'none' };
  return readDeclaration(takeDeclaration(req.body), deps.discovery.limits);
}

function reportDeclaration(res: Response, intake: DeclarationIntake, settled: boolean | 'failed'): void {
  const response = bazaarResponseOf(intake, settled);
  if (response && !res.headersSent) res.setHeader(EXTENSION_RESPONSES_HEADER, extensionResponsesHeader(response));
}

/** Header naming the stored record of an x402 answer, for support; the middleware ignores it. */
export const VERIFICATION_ID_HEADER = 'X-Verification-Id';
export const SETTLEMENT_ID_HEADER = 'X-Settlement-Id';

/**
 * The standard x402 facilitator API — `POST /verify`, `POST /settle`, `GET /supported` — over the same
 * engine as /v1: the same checks and records, the same settle intake and fee-first settlement in the
 * worker, the same one-settlement-per-payment idempotency. Outcomes (valid or not, settled or not) are
 * HTTP 200 with the standard body, as the reference facilitator answers; a request we cannot read is 400,
 * a missing settle key 401, and a failure of ours 5xx, each still in the standard shape, so every x402
 * client can report it.
 */
export function x402Routes(deps: X402RouteDeps) {
  const router = apiRouter();

  router.get(`${X402_PREFIX}/supported`, async (_req, res) => {
    res.json(await supportedOf(deps.networks, deps.availability, deps.signers, deps.treasury));
  });

  router.post(`${X402_PREFIX}/verify`, async (req, res) => {
    try {
      // verify stores nothing of a declaration: valid, it is processing (listed once a payment settles)
      reportDeclaration(res, declarationOf(deps, req), false);
      const x = parseX402Request(req.body, deps.networks);
      const { record, failure } = await deps.verifier.verify(x);
      res.setHeader(VERIFICATION_ID_HEADER, record.id);
      if (failure) res.json(x402VerifyInvalid(x402InvalidReasonOf(failure), x402InvalidMessageOf(failure), x.payer));
      else res.json(x402VerifyValid(x.payer));
    } catch (err) {
      const echo = x402RequestEcho(req.body);
      if (err instanceof PaymentIdentifierConflictError) {
        // an outcome about the payment, as every other: 200 with isValid false, which the middleware reports
        res.json(x402VerifyInvalid(X402Reason.PaymentIdentifierConflict, err.message, echo.payer));
        return;
      }
      const { status, reason, message } = problemOf(err, X402Reason.UnexpectedVerifyError, deps.logger);
      res.status(status).json(x402VerifyInvalid(reason, message, echo.payer));
    }
  });

  router.post(`${X402_PREFIX}/settle`, async (req, res) => {
    try {
      await settle(deps, req, res);
    } catch (err) {
      const echo = x402RequestEcho(req.body);
      const failed = (status: number, reason: string, message: string) => res.status(status).json(x402SettleFailed(reason, message, echo.payer, echo.network));
      if (err instanceof SettleRefused) {
        if (err.verificationId) res.setHeader(VERIFICATION_ID_HEADER, err.verificationId);
        failed(200, x402InvalidReasonOf(err.failure), x402InvalidMessageOf(err.failure));
      } else if (err instanceof PaymentConflictError) {
        // the closest standard reason, in the payment's mechanism's codes: its nonce is taken by another
        // authorization of the payer's, or by this payment's settlement for another amount (upto)
        const mechanism = err.details?.mechanism as PaymentMechanismId | undefined;
        failed(200, x402InvalidReasonOf({ reason: FailureReason.NonceHeld, mechanism, message: err.message, details: {} }), err.message);
      } else if (err instanceof PaymentIdentifierConflictError) {
        failed(200, X402Reason.PaymentIdentifierConflict, err.message);
      } else if (err instanceof SettleKeyRequired) {
        failed(401, 'unauthorized', err.message);
      } else if (err instanceof FacilitatorError && SETTLEMENT_FAILURE_CODES.has(err.code)) {
        // refused at intake with the answer the worker would give (nothing stored, nothing sent): answered as a
        // failed settlement is, with its standard reason
        const { errorReason, errorMessage } = x402SettleFailureOf({ errorCode: err.code, errorMessage: err.message, errorDetails: err.details ?? {} });
        failed(200, errorReason, errorMessage);
      } else if (err instanceof RateLimitedError) {
        // a budget of the engine's (settlements charged no fee): ours to lift, the client's to retry later
        res.setHeader('Retry-After', String(err.retryAfterSeconds));
        failed(429, err.code, err.message);
      } else {
        const { status, reason, message } = problemOf(err, X402Reason.UnexpectedSettleError, deps.logger);
        failed(status, reason, message);
      }
    }
  });

  return router;
}

/** The codes of a settlement's failure, which the intake may answer before storing one (a pause, the chain's funds). */
const SETTLEMENT_FAILURE_CODES: ReadonlySet<string> = new Set([ErrorCode.InsufficientAllowance, ErrorCode.FeeCollectionFailed, ErrorCode.SettlementFailed]);

/** Admits the payment through the settle intake, then answers its outcome (x402-settle-outcome.ts). */
async function settle(deps: X402RouteDeps, req: Request, res: Response): Promise<void> {
  const arrivedAt = Date.now();
  const declaration = declarationOf(deps, req);
  const command = parseX402SettleCommand(req.body, deps.networks);
  const x = command.x402;
  // repeats of one payment beyond what waits for it are refused before any database work
  const leave = deps.outcome.waits.enter(settleRequestKey(command));
  res.once('close', leave);
  const admitted = await deps.intake.admit(command, bearerKey(req));
  res.setHeader(VERIFICATION_ID_HEADER, admitted.verification.id);
  if (admitted.settlement === null) {
    reportDeclaration(res, declaration, 'failed');
    res.json(x402SettledNothing(x.payer, x.network, x.payment.expected.payTo));
    return;
  }
  if (declaration.kind !== 'none' && deps.discovery && admitted.created) {
    // off the payment's path: not awaited, and a failure to store it only costs the listing; a repeat of the
    // payment (the middleware's retry) meets the settlement this request's first try recorded it for
    const s = admitted.settlement;
    deps.discovery.catalog
      .record(declaration, { id: s.id, merchant: s.merchant, payer: s.payer, network: networkByChainId(s.chainId)!.caip2 })
      .catch((err: unknown) => deps.logger.warn(`could not record a ${BAZAAR} declaration`, { settlementId: s.id, err }));
  }
  const { settlement: outcome, transactionHash, transferWithheld } = await x402SettleOutcome(deps.outcome, admitted, arrivedAt, x.x402Version === 2);
  res.setHeader(SETTLEMENT_ID_HEADER, outcome.id);
  reportDeclaration(res, declaration, transferWithheld || outcome.state === 'failed' ? 'failed' : outcome.state === 'settled');
  if (transferWithheld) {
    // its outcome can no longer change for the payer: the transfer is never sent (the worker ends it failed)
    res.json(x402SettleFailed(X402Reason.UnexpectedSettleError, transferWithheldMessage(outcome), x.payer, x.network));
  } else if (outcome.state === 'settled') {
    res.json(x402SettleSucceeded(outcome, x.payer, x.network, x.x402Version));
  } else if (outcome.state === 'failed') {
    const { errorReason, errorMessage } = x402SettleFailureOf(outcome);
    res.json(x402SettleFailed(errorReason, errorMessage, x.payer, x.network));
  } else {
    // its transaction is signed and on its way: the reference facilitator's non-terminal code, with the hash,
    // which the x402 middleware retries once with the same payload; our idempotency answers that retry
    // with the same settlement (never a second transaction)
    res.json(
      x402SettleFailed(
        X402Reason.SettlementPending,
        `settlement ${outcome.id} is still in progress (state ${outcome.state}); settle the same payment again for its outcome`,
        x.payer,
        x.network,
        transactionHash ?? '',
      ),
    );
  }
}

function transferWithheldMessage(settlement: Settlement): string {
  return (
    `settlement ${settlement.id} failed: its transfer could not be signed before this request had to be answered ` +
    `(the merchant's fee went first and was not confirmed in time), so it will never be sent. The payer was not ` +
    `charged; the merchant's fee, once collected, is kept.`
  );
}

function problemOf(err: unknown, unexpected: X402Reason, logger: Logger): { status: number; reason: string; message: string } {
  if (err instanceof X402RequestRejected) return { status: 400, reason: err.reason, message: err.message };
  // e.g. the chain's RPC did not answer (503): our problem, retryable, not an invalid payment
  if (err instanceof FacilitatorError) return { status: err.status, reason: unexpected, message: err.message };
  logger.error('x402 request failed', { err });
  return { status: 500, reason: unexpected, message: 'internal error' };
}

async function supportedOf(networks: EnabledNetworks, availability: X402RouteDeps['availability'], signers: readonly string[], treasury: string): Promise<X402SupportedResponse> {
  const kinds: X402SupportedResponse['kinds'] = [];
  const served = await Promise.all(networks.all.map((network) => availability.servedOn(network.chainId)));
  // every (scheme, network) an enabled network serves (its registry entry names it and its contracts exist
  // there), in each x402 version whose payloads carry it (v1: EIP-3009 `exact` only, where the network has a v1 name)
  for (const [n, network] of networks.all.entries()) {
    const known = networkByChainId(network.chainId)!;
    const names = { 2: network.caip2, 1: known.x402V1Name } as const;
    for (const x402Version of [2, 1] as const) {
      const name = names[x402Version];
      if (!name) continue;
      const described = mechanismsInVersion(served[n], x402Version).map((id) => mechanismById(id).describe(network, treasury));
      // one kind per scheme: the mechanisms of one scheme (EIP-3009 and Permit2 `exact`) are one kind to a client
      for (const { scheme, extra } of described.filter((d, i) => described.findIndex((o) => o.scheme === d.scheme) === i)) {
        kinds.push({ x402Version, scheme, network: name, ...(extra ? { extra } : {}) });
      }
    }
  }
  const unique = [...new Set(signers.map((s) => s.toLowerCase()))].map((s) => getAddress(s));
  // payment-identifier: a payment's id binds to it; the same id settles it once (docs/decisions.md, "Payment identifiers");
  // then each extension a served mechanism reads (`PaymentMechanism.x402.extensions`: the Permit2 ones' eip2612GasSponsoring,
  // the payer's EIP-2612 permit sent with the payment; docs/decisions.md, "eip2612GasSponsoring");
  // bazaar: resources declared with a payment are listed once it settled (docs/api.md, "Discovery")
  const read = [...new Set(served.flat().flatMap((id) => (mechanismById(id).x402?.extensions ?? []).map((extension) => extension.key)))];
  // the relayers sign for the EVM family: x402 keys signers by CAIP-2 namespace
  return { kinds, extensions: [PAYMENT_IDENTIFIER, ...read, BAZAAR], signers: { [`${CHAIN_FAMILIES.evm.caipNamespace}:*`]: unique } };
}
