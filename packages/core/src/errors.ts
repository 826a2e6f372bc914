import { ErrorCode } from './error-codes';

type ErrorDetails = Record<string, unknown>;

/** The spec's error envelope: `{ "error": { "code", "message", "details"? } }`. */
interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: ErrorDetails };
}

/**
 * Base of every error that reaches a client. It carries the spec's code, the HTTP status and the
 * details; one middleware turns it into the envelope. Anything else that escapes is an internal error.
 */
export class FacilitatorError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly details?: ErrorDetails,
    /** what went wrong underneath: logged by the server, never sent to the client */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = new.target.name;
  }

  toEnvelope(): ErrorEnvelope {
    const error: ErrorEnvelope['error'] = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

export class InvalidRequestError extends FacilitatorError {
  constructor(message: string, details?: ErrorDetails) {
    super(ErrorCode.InvalidRequest, 400, message, details);
  }
}

export class UnsupportedNetworkError extends FacilitatorError {
  constructor(network: string, enabled: readonly string[]) {
    super(ErrorCode.UnsupportedNetwork, 400, `network ${JSON.stringify(network)} is not supported here`, {
      network,
      supported: [...enabled],
    });
  }
}

export class VerificationFailedError extends FacilitatorError {
  constructor(message: string, details: ErrorDetails) {
    super(ErrorCode.VerificationFailed, 400, message, details);
  }
}

export class InsufficientAllowanceError extends FacilitatorError {
  constructor(message: string, details: ErrorDetails) {
    super(ErrorCode.InsufficientAllowance, 400, message, details);
  }
}

export class FeeCollectionFailedError extends FacilitatorError {
  constructor(message: string, details: ErrorDetails) {
    super(ErrorCode.FeeCollectionFailed, 400, message, details);
  }
}

export class SettlementFailedError extends FacilitatorError {
  constructor(message: string, details: ErrorDetails) {
    super(ErrorCode.SettlementFailed, 400, message, details);
  }
}

export class NotFoundError extends FacilitatorError {
  constructor(message = 'not found') {
    super(ErrorCode.NotFound, 404, message);
  }
}

/** A path that is served, asked with a method it does not answer: 405 with the methods it does (the `Allow` header). */
export class MethodNotAllowedError extends FacilitatorError {
  constructor(
    method: string,
    path: string,
    readonly allowed: readonly string[],
  ) {
    super(ErrorCode.MethodNotAllowed, 405, `${path} does not answer ${method}; it answers ${allowed.join(', ')}`, { allowed_methods: [...allowed] });
  }
}

export class UnauthorizedError extends FacilitatorError {
  constructor(message = 'a valid X-API-Key header is required') {
    super(ErrorCode.Unauthorized, 401, message);
  }
}

/**
 * Another authorization with the same payer and nonce owns this payment: only one of them can ever be
 * paid on chain, and an answer about one must never be given for the other (docs/decisions.md,
 * "Payment identity").
 */
export class PaymentConflictError extends FacilitatorError {
  constructor(message: string, details: ErrorDetails) {
    super(ErrorCode.PaymentConflict, 409, message, details);
  }
}

/**
 * The x402 `payment-identifier` a payment came with is already bound to another payment to the same
 * merchant (docs/decisions.md, "Payment identifiers"): the extension's "same id, different payload" 409.
 * The other payment is not described: it may be another payer's.
 */
export class PaymentIdentifierConflictError extends FacilitatorError {
  constructor(paymentId: string) {
    super(
      ErrorCode.PaymentIdentifierConflict,
      409,
      `payment identifier ${JSON.stringify(paymentId)} is already bound to another payment to this merchant; use a new identifier for a new payment, or send the same payment again`,
      { payment_id: paymentId },
    );
  }
}

export class IdempotencyKeyInFlightError extends FacilitatorError {
  constructor() {
    super(ErrorCode.IdempotencyKeyInFlight, 409, 'a request with this Idempotency-Key is still being processed');
  }
}

export class IdempotencyKeyReusedError extends FacilitatorError {
  constructor() {
    super(ErrorCode.IdempotencyKeyReused, 422, 'this Idempotency-Key was used with a different request body');
  }
}

export class PayloadTooLargeError extends FacilitatorError {
  constructor(limitBytes: number) {
    super(ErrorCode.PayloadTooLarge, 413, `request body is larger than ${limitBytes} bytes`, { limit_bytes: limitBytes });
  }
}

export class RateLimitedError extends FacilitatorError {
  constructor(readonly retryAfterSeconds: number) {
    super(ErrorCode.RateLimited, 429, `too many requests; retry after ${retryAfterSeconds} s`, { retry_after_seconds: retryAfterSeconds });
  }
}

export class ServiceUnavailableError extends FacilitatorError {
  constructor(message: string, details?: ErrorDetails, cause?: unknown) {
    super(ErrorCode.ServiceUnavailable, 503, message, details, cause);
  }
}

/** A network's RPC endpoint could not be asked. Its error stays in our logs: it may name the endpoint and its key. */
export function rpcUnavailable(network: string, cause: unknown): ServiceUnavailableError {
  return new ServiceUnavailableError(`the ${network} RPC endpoint did not answer; try again`, { network, dependency: 'rpc' }, cause);
}

/** What we say of a failure of ours that has no better name: never the error itself (no stack, no internals). */
export class InternalError extends FacilitatorError {
  constructor() {
    super(ErrorCode.InternalError, 500, 'internal error');
  }
}

export function internalErrorEnvelope(): ErrorEnvelope {
  return new InternalError().toEnvelope();
}
