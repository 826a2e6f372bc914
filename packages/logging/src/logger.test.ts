import { PassThrough } from 'node:stream';
import { createLogger } from './logger';

function capture() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  return { stream, lines };
}

describe('createLogger', () => {
  const secret = '0x' + 'ab'.repeat(32);

  it('writes JSON lines naming the service', async () => {
    const { stream, lines } = capture();
    createLogger({ service: 'api', stream }).info('hello', { requestId: 'r1' });
    await new Promise((r) => setImmediate(r));
    expect(JSON.parse(lines[0])).toMatchObject({ message: 'hello', service: 'api', requestId: 'r1', level: 'info' });
  });

  it('never writes a known secret or a secret-named field', async () => {
    const { stream, lines } = capture();
    const logger = createLogger({ service: 'worker', stream, secrets: [secret, 'whsec_topsecret'] });
    logger.info(`key is ${secret}`, { nested: { privateKey: 'x', note: 'whsec_topsecret!' }, apiKey: 'k' });
    logger.error(new Error(`boom ${secret.slice(2)}`));
    await new Promise((r) => setImmediate(r));
    const text = lines.join('\n');
    expect(text).not.toContain('ab'.repeat(32));
    expect(text).not.toContain('whsec_topsecret');
    expect(text).toContain('[redacted]');
    expect(JSON.parse(lines[0]).nested.privateKey).toBe('[redacted]');
    expect(JSON.parse(lines[0]).apiKey).toBe('[redacted]');
  });
});
