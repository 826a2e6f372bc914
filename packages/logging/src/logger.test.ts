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

  it("keeps an error's message, code, stack and cause chain, however deeply it is nested", async () => {
    const { stream, lines } = capture();
    const root = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED', errno: -111 });
    const middle = new Error('queue unavailable', { cause: root });
    const top = Object.assign(new Error('cluster metrics failed', { cause: middle }), { code: 'METRICS_FAILED' });
    const aggregate = new AggregateError([new TypeError('first'), Object.assign(new Error('second'), { code: 'E2' })], 'several');
    // as deep as plain data may go (8 levels): the errors there, and every cause under them, come out whole
    let deep: Record<string, unknown> = { err: top, aggregate };
    for (let i = 0; i < 7; i++) deep = { level: deep };
    createLogger({ service: 'api', stream }).error('scrape failed', { err: top, deep });
    await new Promise((r) => setImmediate(r));
    const line = JSON.parse(lines[0]);

    for (const logged of [line.err, unwrap(line.deep, 7).err]) {
      expect(logged).toMatchObject({ name: 'Error', message: 'cluster metrics failed', code: 'METRICS_FAILED' });
      expect(logged.stack).toContain('cluster metrics failed');
      expect(logged.stack).toContain('logger.test');
      expect(logged.cause).toMatchObject({ message: 'queue unavailable' });
      expect(logged.cause.stack).toContain('queue unavailable');
      expect(logged.cause.cause).toMatchObject({ message: 'connect ECONNREFUSED 127.0.0.1:6379', code: 'ECONNREFUSED', errno: -111 });
      expect(logged.cause.cause.stack).toContain('ECONNREFUSED');
    }
    const aggregateLogged = unwrap(line.deep, 7).aggregate as { errors: unknown[] };
    expect(aggregateLogged).toMatchObject({ name: 'AggregateError', message: 'several' });
    expect(aggregateLogged.errors).toEqual([
      expect.objectContaining({ name: 'TypeError', message: 'first', stack: expect.stringContaining('first') }),
      expect.objectContaining({ message: 'second', code: 'E2' }),
    ]);
    expect(lines[0]).not.toContain('[depth]"}');
  });

  it('stops at a cycle instead of failing, and still cuts runaway plain data', async () => {
    const { stream, lines } = capture();
    const looping = new Error('loops') as Error & { cause?: unknown };
    looping.cause = looping;
    const data: Record<string, unknown> = { name: 'self' };
    data.self = data;
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 20; i++) deep = { level: deep };
    createLogger({ service: 'api', stream }).error('odd shapes', { err: looping, data, deep });
    await new Promise((r) => setImmediate(r));
    const line = JSON.parse(lines[0]);
    expect(line.err).toMatchObject({ message: 'loops', cause: '[circular]' });
    expect(line.data).toEqual({ name: 'self', self: '[circular]' });
    expect(JSON.stringify(line.deep)).toContain('[depth]');
  });

  it('describes an error logged as the message itself', async () => {
    const { stream, lines } = capture();
    createLogger({ service: 'worker', stream }).error(Object.assign(new Error('boom', { cause: new Error('underneath') }), { code: 'E_BOOM' }));
    await new Promise((r) => setImmediate(r));
    const line = JSON.parse(lines[0]);
    expect(line.message).toContain('boom');
    expect(line.stack).toContain('boom');
    expect(line.code).toBe('E_BOOM');
    expect(line.cause).toMatchObject({ message: 'underneath' });
  });
});

function unwrap(value: unknown, levels: number): Record<string, unknown> {
  let current = value;
  for (let i = 0; i < levels; i++) current = (current as { level?: unknown }).level;
  return current as Record<string, unknown>;
}
