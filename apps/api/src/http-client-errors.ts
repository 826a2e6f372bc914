import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { InvalidRequestError } from '@facilitator/core';

/** The error an HTTP message Node could not even parse stands for (it never reaches Express). */
function errorOf(code: string | undefined): InvalidRequestError {
  if (code === 'HPE_HEADER_OVERFLOW') return new InvalidRequestError('the request headers are too large');
  return new InvalidRequestError('the request is not a well-formed HTTP/1.1 message (e.g. a body without Content-Length or chunked framing)');
}

/**
 * Answers a request Node's HTTP parser refused (a malformed message, a body with no framing, oversized
 * headers) in the error envelope like every other refusal, instead of Node's bare "400 Bad Request"; the
 * connection is closed, as what follows on it cannot be trusted.
 */
export function answerClientErrorsInTheEnvelope(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const error = errorOf(err.code);
    const body = JSON.stringify(error.toEnvelope());
    socket.end(
      `HTTP/1.1 400 Bad Request\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
