import type { ErrorRequestHandler } from 'express';
import { FacilitatorError, InternalError, InvalidRequestError, MethodNotAllowedError, PayloadTooLargeError } from '@facilitator/core';
import type { Logger } from '@facilitator/logging';
import { asServiceUnavailable } from '../infrastructure-errors';
import { answerShapeOf, refusalBody } from './answer-shape';

interface BodyParserError extends Error {
  type?: string;
  /** the text body-parser refused */
  body?: string;
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
      return new InvalidRequestError(notJsonMessage(err.body));
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

/**
 * The parser accepts an object or an array at the top (strict mode); a body that is JSON of another kind
 * (`null`, `"hello"`, `42`) is told what it is, not that it is not JSON.
 */
function notJsonMessage(text: string | undefined): string {
  try {
    const value: unknown = text === undefined ? undefined : JSON.parse(text);
    if (value !== undefined) return `request body must be a JSON object, not ${value === null ? 'null' : `a ${typeof value}`}`;
  } catch {
    // not JSON at all
  }
  return 'request body is not valid JSON';
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
    const shape = answerShapeOf(req.path);
    if (known) {
      if (known.status >= 500) logger.warn('answered with a server-side error', { requestId: req.id, code: known.code, cause: known.cause });
      if (known.status === 429 && known.details?.retry_after_seconds) res.setHeader('Retry-After', String(known.details.retry_after_seconds));
      if (known instanceof MethodNotAllowedError) res.setHeader('Allow', known.allowed.join(', '));
      res.status(known.status).json(refusalBody(known, shape));
      return;
    }
    const unavailable = asServiceUnavailable(err);
    if (unavailable) {
      logger.warn('dependency unavailable', { requestId: req.id, err });
      res.setHeader('Retry-After', '5');
      res.status(503).json(refusalBody(unavailable, shape));
      return;
    }
    logger.error('unhandled error', { requestId: req.id, err });
    res.status(500).json(refusalBody(new InternalError(), shape));
  };
}
