import type { ErrorRequestHandler, RequestHandler } from 'express';
import {
  FacilitatorError,
  InvalidRequestError,
  NotFoundError,
  PayloadTooLargeError,
  internalErrorEnvelope,
} from '@facilitator/core';
import type { Logger } from '@facilitator/logging';
import { asServiceUnavailable } from '../infrastructure-errors';

interface BodyParserError extends Error {
  type?: string;
  limit?: number;
  status?: number;
  expose?: boolean;
}

/** body-parser's own failures, which are the client's fault and deserve a 4xx in our envelope. */
function fromBodyParser(err: BodyParserError, maxBodyBytes: number): FacilitatorError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return new PayloadTooLargeError(maxBodyBytes);
    case 'entity.parse.failed':
      return new InvalidRequestError('request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new InvalidRequestError('request body encoding is not supported; send UTF-8 JSON');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new InvalidRequestError('request body could not be read');
    default:
      // other client-caused read failures (e.g. a body whose Content-Encoding does not match its bytes)
      if (err.expose && err.status !== undefined && err.status >= 400 && err.status < 500) {
        return new InvalidRequestError(`request body could not be read: ${err.message}`);
      }
      return undefined;
  }
}

/** The router's own refusals: a path whose percent-encoding does not decode. */
function fromRouter(err: Error): FacilitatorError | undefined {
  if (err instanceof URIError || (err as BodyParserError).status === 400) {
    return new InvalidRequestError('the request path is not valid percent-encoding');
  }
  return undefined;
}

/** The one place errors become responses: typed errors keep their status; anything else is a logged 500. */
export function errorHandler(logger: Logger, maxBodyBytes: number): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    const known =
      err instanceof FacilitatorError ? err : err instanceof Error ? fromBodyParser(err as BodyParserError, maxBodyBytes) ?? fromRouter(err) : undefined;
    if (res.headersSent) {
      logger.error('error after response started', { requestId: req.id, err });
      return;
    }
    if (known) {
      if (known.status >= 500) logger.warn('answered with a server-side error', { requestId: req.id, code: known.code, cause: known.cause });
      if (known.status === 429 && known.details?.retry_after_seconds) res.setHeader('Retry-After', String(known.details.retry_after_seconds));
      res.status(known.status).json(known.toEnvelope());
      return;
    }
    const unavailable = asServiceUnavailable(err);
    if (unavailable) {
      logger.warn('dependency unavailable', { requestId: req.id, err });
      res.setHeader('Retry-After', '5');
      res.status(503).json(unavailable.toEnvelope());
      return;
    }
    logger.error('unhandled error', { requestId: req.id, err });
    res.status(500).json(internalErrorEnvelope());
  };
}

export function notFoundHandler(): RequestHandler {
  return (req, _res, next) => next(new NotFoundError(`no route for ${req.method} ${req.path}`));
}
