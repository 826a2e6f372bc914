import { ErrorCode, type FacilitatorError } from '@facilitator/core';
import { X402Reason } from '@facilitator/verification';
import { X402_PREFIX } from '../routes/x402';
import { x402SettleFailed, x402VerifyInvalid } from '../presenters/x402';

/**
 * Each API answers a refusal in its own shape, whoever refuses (the JSON parser, the router, a limiter, a
 * route): `/v1` and everything else in the spec's error envelope, `/x402/verify` as a verify response
 * (`isValid: false`, `invalidReason`), `/x402/settle` as a settle response (`success: false`, `errorReason`),
 * so an x402 client reads the reason of every failure, not just of the ones its route saw. Other `/x402`
 * paths (`/supported`, unknown ones) carry x402's field names without an outcome (docs/decisions.md, "Each
 * API answers in its own shape").
 */
export type AnswerShape = 'envelope' | 'x402-verify' | 'x402-settle' | 'x402-other';

export function answerShapeOf(path: string): AnswerShape {
  if (path === `${X402_PREFIX}/verify`) return 'x402-verify';
  if (path === `${X402_PREFIX}/settle`) return 'x402-settle';
  if (path === X402_PREFIX || path.startsWith(`${X402_PREFIX}/`)) return 'x402-other';
  return 'envelope';
}

/** The x402 reason of a refusal made before an x402 route read the request. */
function x402ReasonOf(error: FacilitatorError, shape: AnswerShape): string {
  // a body that cannot be read is an invalid payload to x402's clients; the rest keep our code, which says
  // more than a generic one (payload_too_large, rate_limited, not_found, method_not_allowed, …)
  if (error.code === ErrorCode.InvalidRequest) return X402Reason.InvalidPayload;
  // a failure of ours on verify or settle is what the routes themselves answer it with (routes/x402)
  if (error.status >= 500 && shape === 'x402-verify') return X402Reason.UnexpectedVerifyError;
  if (error.status >= 500 && shape === 'x402-settle') return X402Reason.UnexpectedSettleError;
  return error.code;
}

/** The body answering `error` in `shape`. */
export function refusalBody(error: FacilitatorError, shape: AnswerShape): object {
  if (shape === 'envelope') return error.toEnvelope();
  const reason = x402ReasonOf(error, shape);
  if (shape === 'x402-verify') return x402VerifyInvalid(reason, error.message);
  if (shape === 'x402-settle') return x402SettleFailed(reason, error.message, undefined, undefined);
  return { errorReason: reason, errorMessage: error.message };
}
