import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { answerClientErrorsInTheirShape } from './http-client-errors';

/** Writes raw bytes to the server and reads everything it answers until it closes the connection. */
function raw(server: Server, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('answerClientErrorsInTheirShape', () => {
  let server: Server;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('{}'));
    answerClientErrorsInTheirShape(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers a message the HTTP parser refuses (a DELETE whose body has no framing) with 400 in the envelope', async () => {
    // Node's client sends a DELETE body without Content-Length or chunking: the body reads as a second, broken request
    const answer = await raw(server, 'DELETE /v1/x HTTP/1.1\r\nHost: a\r\n\r\n{"payment":{"x":1}}\r\n\r\n');
    const second = answer.slice(answer.indexOf('HTTP/1.1', 1));
    expect(second).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4))).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('well-formed HTTP/1.1') } });
  });

  it('answers a refused message to /x402/settle in x402\'s settle shape', async () => {
    const answer = await raw(server, 'DELETE /x402/settle HTTP/1.1\r\nHost: a\r\n\r\n{"payment":{"x":1}}\r\n\r\n');
    const second = answer.slice(answer.indexOf('HTTP/1.1', 1));
    expect(second).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    // Node's raw packet still holds the request line it read first: its path picks the shape
    expect(JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4))).toEqual({
      success: false,
      errorReason: 'invalid_payload',
      errorMessage: expect.stringContaining('well-formed HTTP/1.1'),
      transaction: '',
      network: '',
    });
  });

  it('answers oversized headers to /x402/verify in x402\'s verify shape', async () => {
    const answer = await raw(server, `POST /x402/verify HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ isValid: false, invalidReason: 'invalid_payload', invalidMessage: 'the request headers are too large' });
  });

  it('answers oversized headers with 400 in the envelope', async () => {
    const answer = await raw(server, `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error).toEqual({ code: 'invalid_request', message: 'the request headers are too large' });
  });
});
