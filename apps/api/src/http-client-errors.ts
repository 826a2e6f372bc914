import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { InvalidRequestError } from '@facilitator/core';
import { answerShapeOf, refusalBody } from './middleware/answer-shape';

/** The path of the request line Node could read before it gave up, if any: it picks the answer's shape. */
function pathOf(rawPacket: unknown): string {
  if (!Buffer.isBuffer(rawPacket)) return '';
  const requestLine = rawPacket.subarray(0, 8192).toString('latin1').split('\r\n', 1)[0];
  const target = requestLine.split(' ')[1] ?? '';
  return target.split('?', 1)[0];
}

/** The error an HTTP message Node could not even parse stands for (it never reaches Express). */
function errorOf(code: string | undefined): InvalidRequestError {
  if (code === 'HPE_HEADER_OVERFLOW') return new InvalidRequestError('the request headers are too large');
  return new InvalidRequestError('the request is not a well-formed HTTP/1.1 message (e.g. a body without Content-Length or chunked framing)');
}

/**
 * Answers a request Node's HTTP parser refused (a malformed message, a body with no framing, oversized
 * headers) in its API's shape like every other refusal (answer-shape.ts), instead of Node's bare "400 Bad
 * Request"; the connection is closed, as what follows on it cannot be trusted.
 */
export function answerClientErrorsInTheirShape(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Duplex) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const error = errorOf(err.code);
    const body = JSON.stringify(refusalBody(error, answerShapeOf(pathOf(err.rawPacket))));
    socket.end(
      `HTTP/1.1 400 Bad Request\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
