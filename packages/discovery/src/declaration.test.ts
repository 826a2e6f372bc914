import { declareDiscoveryExtension, bazaarResourceServerExtension } from '@x402/extensions/bazaar';
import { bazaarResponseOf, extensionResponsesHeader, readDeclaration, takeDeclaration, type DeclaredPayment } from './declaration';

const limits = { maxBytes: 16 * 1024, allowPrivateUrls: false };
const requirements = { scheme: 'exact', network: 'eip155:8453', amount: '10000', asset: '0x' + 'a'.repeat(40), payTo: '0x' + 'b'.repeat(40), maxTimeoutSeconds: 60 };

/** What a stock merchant's route sends: declared, then enriched for the request (method, route template). */
function enriched(config: Parameters<typeof declareDiscoveryExtension>[0], method = 'GET', routePattern?: string, path = '/weather'): Record<string, unknown> {
  const declared = declareDiscoveryExtension(config).bazaar;
  return bazaarResourceServerExtension.enrichDeclaration!(declared, { method, routePattern, adapter: { getPath: () => path } } as never) as Record<string, unknown>;
}

const payment = (declaration: unknown, url = 'https://api.example.com/weather', extra: Record<string, unknown> = {}): DeclaredPayment => ({
  declaration,
  resource: { url, description: 'the weather', mimeType: 'application/json', ...extra },
  requirements,
});

describe('readDeclaration', () => {
  it('accepts a stock declaration: the listing names the URL, method, requirements paid and the declaration', () => {
    const intake = readDeclaration(payment(enriched({ input: { city: 'paris' }, inputSchema: { properties: { city: { type: 'string' } } } })), limits);
    expect(intake).toMatchObject({
      kind: 'accepted',
      resource: { key: 'http GET https://api.example.com/weather', url: 'https://api.example.com/weather', type: 'http' },
      listing: { resource: 'https://api.example.com/weather', type: 'http', method: 'GET', description: 'the weather', accepts: [requirements] },
    });
  });

  it('honours route templates: the resource is the template, whatever path was paid', () => {
    const intake = readDeclaration(payment(enriched({}, 'GET', '/weather/:city', '/weather/paris'), 'https://api.example.com/weather/paris?units=metric'), limits);
    expect(intake).toMatchObject({ kind: 'accepted', resource: { url: 'https://api.example.com/weather/:city' }, listing: { routeTemplate: '/weather/:city' } });
  });

  it('keys MCP tools by (URL, tool name)', () => {
    const tool = (toolName: string) => readDeclaration(payment(declareDiscoveryExtension({ toolName, inputSchema: { type: 'object' } }).bazaar, 'https://mcp.example.com/mcp'), limits);
    expect(tool('search')).toMatchObject({ kind: 'accepted', resource: { key: 'mcp https://mcp.example.com/mcp search', type: 'mcp' } });
    expect(tool('fetch')).toMatchObject({ kind: 'accepted', resource: { key: 'mcp https://mcp.example.com/mcp fetch' } });
  });

  it('rejects info that fails its schema, naming the field and the reason', () => {
    const intake = readDeclaration(payment(enriched({ input: { city: 5 }, inputSchema: { properties: { city: { type: 'string' } } } })), limits);
    expect(intake).toMatchObject({ kind: 'rejected', field: 'extensions.bazaar.info.input.queryParams.city', reason: "does not match the declaration's schema: must be string" });
    expect(bazaarResponseOf(intake, false)).toEqual({ status: 'rejected', rejectedReason: "extensions.bazaar.info.input.queryParams.city: does not match the declaration's schema: must be string" });
  });

  it('names a missing required field', () => {
    const declaration = enriched({ bodyType: 'json', input: {}, inputSchema: { type: 'object', required: ['q'] } }, 'POST');
    expect(readDeclaration(payment(declaration), limits)).toMatchObject({ kind: 'rejected', field: 'extensions.bazaar.info.input.body.q' });
  });

  it.each([
    ['http://127.0.0.1/x', /private address refused/],
    ['http://10.1.2.3/x', /private address refused/],
    ['http://169.254.169.254/latest', /private address refused/],
    ['http://[::1]/x', /private address refused/],
    ['http://0x7f000001/x', /private address refused/],
    ['http://printer/x', /single-label/],
    ['https://db.internal/x', /local or internal/],
    ['ftp://example.com/x', /not http or https/],
    ['https://user:pw@example.com/x', /credentials/],
  ])('refuses the resource URL %s', (url, reason) => {
    expect(readDeclaration(payment(enriched({}), url), limits)).toMatchObject({ kind: 'rejected', field: 'resource.url', reason: expect.stringMatching(reason) });
  });

  it('accepts private URLs in development when allowed', () => {
    expect(readDeclaration(payment(enriched({}), 'http://127.0.0.1:4021/x'), { ...limits, allowPrivateUrls: true }).kind).toBe('accepted');
  });

  it('bounds size and depth, and refuses text Postgres cannot store', () => {
    expect(readDeclaration(payment(enriched({ input: { q: 'x'.repeat(20_000) } })), limits)).toMatchObject({ kind: 'rejected', field: 'extensions.bazaar', reason: expect.stringMatching(/larger than 16384/) });
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    expect(readDeclaration(payment({ info: deep, schema: {} }), limits)).toMatchObject({ kind: 'rejected', reason: expect.stringMatching(/nests more than/) });
    expect(readDeclaration(payment(enriched({ input: { q: '\u0000' } })), limits)).toMatchObject({ kind: 'rejected', reason: expect.stringMatching(/NUL/) });
  });

  it('refuses external references and backtracking patterns before compiling anything', () => {
    const remote = { ...enriched({}), schema: { $ref: 'http://169.254.169.254/schema' } };
    expect(readDeclaration(payment(remote), limits)).toMatchObject({ kind: 'rejected', field: 'extensions.bazaar.schema.$ref' });
    const redos = { ...enriched({}), schema: { type: 'object', properties: { x: { type: 'string', pattern: '(a|aa)+$' } } } };
    expect(readDeclaration(payment(redos), limits)).toMatchObject({ kind: 'rejected', reason: expect.stringMatching(/backtracking/) });
  });

  it('refuses an unreadable route template, an unknown type, a body on GET', () => {
    expect(readDeclaration(payment({ ...enriched({}), routeTemplate: '/a/../../b' }), limits)).toMatchObject({ kind: 'rejected', field: 'extensions.bazaar.routeTemplate' });
    expect(readDeclaration(payment({ info: { input: { type: 'grpc' } }, schema: {} }), limits)).toMatchObject({ kind: 'rejected', field: 'extensions.bazaar.info.input.type' });
    expect(readDeclaration(payment({ info: { input: { type: 'http', method: 'GET', bodyType: 'json' } }, schema: {} }), limits)).toMatchObject({ kind: 'rejected', field: 'extensions.bazaar.info.input.bodyType' });
  });

  it('files a declaration too broken to name its resource under its URL, so the merchant still sees why', () => {
    expect(readDeclaration(payment('nonsense', 'https://api.example.com/a?b=1'), limits)).toMatchObject({ kind: 'rejected', resource: { key: 'unreadable https://api.example.com/a', url: 'https://api.example.com/a' } });
  });

  it('keeps only sanitized service metadata and bounded requirement fields', () => {
    const intake = readDeclaration(payment(enriched({}), 'https://api.example.com/w', { serviceName: 'x'.repeat(40), tags: ['ok', 'ok', 'a\u0007'], iconUrl: 'http://10.0.0.1/i.png' }), limits);
    expect(intake.kind).toBe('accepted');
    const listing = (intake as unknown as { listing: Record<string, unknown> }).listing;
    expect(listing.serviceName).toBeUndefined();
    expect(listing.tags).toEqual(['ok']);
    expect(listing.iconUrl).toBeUndefined();
  });
});

describe('takeDeclaration', () => {
  it('removes the bazaar declaration from the body, leaving the other extensions', () => {
    const body = { paymentPayload: { resource: { url: 'https://a.example/x' }, extensions: { bazaar: { info: {} }, 'payment-identifier': { info: { id: 'x' } } } }, paymentRequirements: requirements };
    const taken = takeDeclaration(body);
    expect(taken).toEqual({ declaration: { info: {} }, resource: { url: 'https://a.example/x' }, requirements });
    expect(body.paymentPayload.extensions).toEqual({ 'payment-identifier': { info: { id: 'x' } } });
    expect(takeDeclaration({ paymentPayload: { extensions: {} } })).toBeUndefined();
    expect(takeDeclaration('x')).toBeUndefined();
  });
});

describe('the EXTENSION-RESPONSES header', () => {
  it('is base64 JSON keyed by extension, as the 2.27 facilitator client decodes it', () => {
    expect(JSON.parse(Buffer.from(extensionResponsesHeader({ status: 'success' }), 'base64').toString())).toEqual({ bazaar: { status: 'success' } });
    expect(bazaarResponseOf({ kind: 'none' }, true)).toBeUndefined();
  });
});

describe('schemas from strangers', () => {
  it('compiles each distinct schema once, and forgets the oldest beyond the cache (in Ajv too)', () => {
    const { validateInfo } = jest.requireActual('./schema-check') as typeof import('./schema-check');
    for (let i = 0; i < 600; i++) {
      expect(validateInfo({ input: { n: i } }, { type: 'object', properties: { input: { type: 'object', properties: { n: { const: i } } } } })).toBeUndefined();
    }
    expect(validateInfo({ input: { n: 1 } }, { type: 'object', properties: { input: { type: 'object', properties: { n: { const: 2 } } } } })).toMatchObject({ field: 'extensions.bazaar.info.input.n' });
  });

  it('tells a merchant that forgot the server extension why its HTTP declaration has no method', () => {
    const declared = declareDiscoveryExtension({}).bazaar;
    expect(readDeclaration(payment(declared), limits)).toMatchObject({ kind: 'rejected', field: 'extensions.bazaar.info.input.method', reason: expect.stringContaining('bazaarResourceServerExtension') });
  });
});
