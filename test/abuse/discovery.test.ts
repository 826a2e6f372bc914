// Attacks on the x402 bazaar catalog (issue 45, discovery 1-4): a listing for a payTo that was never paid,
// oversized and malformed declarations, a flood of declarations, resource URLs pointing at private addresses.
// Each shows no harm: nothing listed that a settled payment to that payTo did not list, every payment settled
// as it would without its declaration, storage bounded. Real USDC on anvil, the compiled worker, the API in
// process, resource URLs checked as in production (DISCOVERY_ALLOW_PRIVATE_URLS off).
import { getAddress } from 'ethers';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { withBazaar } from '@x402/extensions/bazaar';
import { newMerchant } from '../support/chain-actions';
import { LocalServers } from '../support/local-servers';
import { startTestStack, type TestStack } from '../support/test-stack';
import { until } from '../support/until';
import { x402V2Request } from '../support/x402-request';
import { abuseReport } from './abuse-report';

const AMOUNT = 20_000n;
const MAX_PER_PAYTO = 3;
let stack: TestStack;
const servers = new LocalServers();
let facilitatorUrl: string;

beforeAll(async () => {
  stack = await startTestStack({ env: { DISCOVERY_MAX_RESOURCES_PER_PAYTO: String(MAX_PER_PAYTO) } });
  await stack.startWorker();
  facilitatorUrl = `${await servers.listen(stack.api.app)}/x402`;
});
afterAll(async () => {
  await servers.close();
  await stack?.stop();
});

/** A valid declaration of a GET resource, as `declareDiscoveryExtension` + `bazaarResourceServerExtension` make one. */
function declaration(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    info: { input: { type: 'http', method: 'GET', queryParams: { q: 'x' } } },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { input: { type: 'object', properties: { type: { const: 'http' }, method: { enum: ['GET'] }, queryParams: { type: 'object' } }, required: ['type', 'method'] } },
      required: ['input'],
    },
    ...extra,
  };
}

// a public address literal: no DNS lookup is needed to list it (this machine may have none)
const PUBLIC = 'https://93.184.215.14';

/** An x402 v2 request paying the devnet merchant, carrying `bazaar` (when given) and a resource block. */
async function paymentWith(bazaar: unknown, resource: Record<string, unknown> | undefined, payTo = stack.devnet.accounts.merchant.address) {
  const p = await stack.payment({ value: AMOUNT, to: payTo });
  const body = x402V2Request(p.authorization, p.signature, { payTo, amount: AMOUNT, asset: stack.devnet.token });
  const payload = body.paymentPayload as Record<string, unknown>;
  if (resource) payload.resource = resource;
  if (bazaar !== undefined) payload.extensions = { bazaar };
  return body;
}

const headerOf = (res: { headers: Record<string, string> }) =>
  res.headers['extension-responses'] ? JSON.parse(Buffer.from(res.headers['extension-responses'], 'base64').toString('utf8')).bazaar : undefined;

async function settle(body: object) {
  const res = await stack.http.post('/x402/settle').send(body);
  return { status: res.status, success: res.body.success as boolean, bazaar: headerOf(res), body: res.body };
}

async function indexed(): Promise<void> {
  await until('every declaration indexed', async () => {
    const { rows } = await stack.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM discovery_declarations`);
    return rows[0].n === 0;
  });
}

const count = async (sql: string, values: unknown[] = []) => (await stack.db.pool.query<{ n: number }>(sql, values)).rows[0].n;

const bazaarClient = () => withBazaar(new HTTPFacilitatorClient({ url: facilitatorUrl })).extensions.bazaar;

it('(discovery 1) a listing for a payTo that was never paid: verify alone, a refused settle, a declaration naming another payTo', async () => {
  const report = abuseReport(
    'discovery-1-unpaid-payto',
    'Catalog listing for a payTo never paid',
    'valid declarations sent with verify only, with a settle whose signature is wrong, and with a settled payment whose declaration and resource block name another payTo (an attacker wanting its resource listed for a victim, or a victim listed with its resource)',
  );
  const victim = getAddress('0x000000000000000000000000000000000000dEaD');
  const merchant = getAddress(stack.devnet.accounts.merchant.address);
  // 1. verify only: valid, never settled
  const verifyOnly = await stack.http.post('/x402/verify').send(await paymentWith(declaration(), { url: `${PUBLIC}/verify-only` }));
  // 2. a settle refused (the signature does not match): no settlement, nothing kept
  const forged = await paymentWith(declaration(), { url: `${PUBLIC}/forged` });
  (forged.paymentPayload.payload as { signature: string }).signature = `0x${'11'.repeat(65)}`;
  const refused = await settle(forged);
  // 3. settled, its declaration claiming the victim as payTo everywhere it can
  const claiming = declaration({ info: { input: { type: 'http', method: 'GET', queryParams: { payTo: victim } } }, payTo: victim, accepts: [{ payTo: victim }] });
  const settled = await settle(await paymentWith(claiming, { url: `${PUBLIC}/claims-victim`, payTo: victim }));
  await indexed();

  const bazaar = bazaarClient();
  const forVictim = await bazaar.listResources({ payTo: victim });
  const all = await bazaar.listResources({ limit: 100 });
  const stored = await stack.db.pool.query<{ merchant: string; resource_url: string }>(`SELECT merchant, resource_url FROM discovery_resources`);
  const checks = {
    verifyValid: report.check('verify with a valid declaration: payment valid, declaration processing', 'true processing', `${verifyOnly.body.isValid} ${headerOf(verifyOnly)?.status}`),
    refused: report.check('settle with a forged signature refused', false, refused.success),
    settled: report.check('the payment to the merchant settled', true, settled.success),
    victimListed: report.check('resources listed for the victim payTo (never paid)', 0, forVictim.items.length),
    onlyPaid: report.check('resources listed in all', `${PUBLIC}/claims-victim`, all.items.map((i) => i.resource).join(' ')),
    payToPaid: report.check('payTo of the listed resource: the one actually paid', merchant, all.items[0]?.accepts[0]?.payTo),
    storedRows: report.check('catalog rows stored (merchant, resource)', `${merchant.toLowerCase()} ${PUBLIC}/claims-victim`, stored.rows.map((r) => `${r.merchant} ${r.resource_url}`).join(' ')),
  };
  report.save();
  expect(checks).toEqual(Object.fromEntries(Object.keys(checks).map((k) => [k, true])));
});

it('(discovery 2) oversized and malformed declarations are refused cleanly; every payment settles as it would without one', async () => {
  const report = abuseReport(
    'discovery-2-bad-declarations',
    'Oversized and malformed bazaar declarations',
    'settled payments carrying a 40 KB declaration, one nested 200 levels deep (the request body itself may nest 32), a string, one with a NUL character, one whose schema references a remote URL, one with a catastrophically backtracking pattern, and one with an unreadable route template',
  );
  let deep: unknown = { leaf: true };
  for (let i = 0; i < 200; i++) deep = { nested: deep };
  const cases: Array<[string, unknown]> = [
    ['oversized', declaration({ info: { input: { type: 'http', method: 'GET', queryParams: { q: 'x'.repeat(40_000) } } } })],
    ['deep', declaration({ info: deep })],
    ['string', 'not a declaration'],
    ['nul', declaration({ info: { input: { type: 'http', method: 'GET', queryParams: { q: 'a\u0000b' } } } })],
    ['remote-ref', declaration({ schema: { $ref: 'https://attacker.example/schema.json' } })],
    ['redos', declaration({ schema: { type: 'object', properties: { input: { type: 'object', properties: { method: { type: 'string', pattern: '^(a+)+$' } } } } } })],
    ['route-template', declaration({ routeTemplate: '/../../etc/passwd' })],
  ];
  const before = await stack.devnet.balanceOf(stack.devnet.accounts.merchant.address);
  const outcomes: Array<{ name: string; status: number; success: boolean; bazaar: { status: string; rejectedReason?: string } }> = [];
  for (const [name, bad] of cases) {
    const started = Date.now();
    const answer = await settle(await paymentWith(bad, { url: `${PUBLIC}/bad/${name}`, description: 'bad' }));
    outcomes.push({ name, ...answer });
    report.note(`${name}: HTTP ${answer.status}, success ${answer.success}, ${answer.bazaar?.status}: ${answer.bazaar?.rejectedReason} (${Date.now() - started} ms)`);
  }
  await indexed();
  const gained = (await stack.devnet.balanceOf(stack.devnet.accounts.merchant.address)) - before;
  const listed = await bazaarClient().listResources({ limit: 100 });
  const checks = {
    answered200: report.check('settle answers HTTP 200', cases.map(() => 200).join(','), outcomes.map((o) => o.status).join(',')),
    settled: report.check('payments settled', cases.length, outcomes.filter((o) => o.success).length),
    merchantPaid: report.check('merchant balance change (each payment less the fee)', ((AMOUNT - 10_000n) * BigInt(cases.length)).toString(), gained.toString()),
    rejected: report.check('declarations reported rejected', cases.length, outcomes.filter((o) => o.bazaar?.status === 'rejected').length),
    size: report.assert('the oversized one says why', 'mentions the byte limit', outcomes[0].bazaar.rejectedReason, /larger than 16384 bytes/.test(outcomes[0].bazaar.rejectedReason ?? '')),
    depth: report.assert('the deep one says why', 'mentions the depth', outcomes[1].bazaar.rejectedReason, /nests more than/.test(outcomes[1].bazaar.rejectedReason ?? '')),
    remote: report.assert('the remote $ref is never fetched', 'refused as an outside reference', outcomes[4].bazaar.rejectedReason, /outside itself/.test(outcomes[4].bazaar.rejectedReason ?? '')),
    redos: report.assert('the backtracking pattern is never run', 'refused', outcomes[5].bazaar.rejectedReason, /backtracking/.test(outcomes[5].bazaar.rejectedReason ?? '')),
    listedNone: report.check('of these, resources listed', 0, listed.items.filter((i) => i.resource.includes('/bad/')).length),
  };
  report.save();
  expect(checks).toEqual(Object.fromEntries(Object.keys(checks).map((k) => [k, true])));
});

it('(discovery 3) a flood of declarations: verify stores none, settled ones beyond the per-payTo cap are not stored', async () => {
  const report = abuseReport(
    'discovery-3-flood',
    'A flood of bazaar declarations',
    `200 verify requests each declaring a distinct 8 KB resource, then 8 settled payments each declaring a distinct resource to one payTo (DISCOVERY_MAX_RESOURCES_PER_PAYTO=${MAX_PER_PAYTO})`,
  );
  // a merchant of its own, with no resource yet
  const shop = await newMerchant(stack.devnet, { balance: 100_000n, allowance: 100_000n });
  const merchant = shop.address.toLowerCase();
  const declarationsBefore = await count(`SELECT count(*)::int AS n FROM discovery_declarations`);
  const p = await stack.payment({ value: AMOUNT, to: shop.address });
  const base = x402V2Request(p.authorization, p.signature, { payTo: shop.address, amount: AMOUNT, asset: stack.devnet.token });
  const verifies = await Promise.all(
    Array.from({ length: 200 }, async (_, i) => {
      const body = structuredClone(base) as unknown as { paymentPayload: Record<string, unknown> };
      body.paymentPayload.resource = { url: `${PUBLIC}/flood/verify/${i}`, description: 'y'.repeat(1000) };
      body.paymentPayload.extensions = { bazaar: declaration({ info: { input: { type: 'http', method: 'GET', queryParams: { pad: 'z'.repeat(7000), i: String(i) } } } }) };
      return stack.http.post('/x402/verify').send(body);
    }),
  );
  const declarationsAfterVerifies = await count(`SELECT count(*)::int AS n FROM discovery_declarations`);
  const settles = await Promise.all(Array.from({ length: 8 }, async (_, i) => settle(await paymentWith(declaration(), { url: `${PUBLIC}/flood/settle/${i}` }, shop.address))));
  await indexed();
  const rows = await count(`SELECT count(*)::int AS n FROM discovery_resources WHERE merchant = $1`, [merchant]);
  const checks = {
    verified: report.check('verify answers valid', 200, verifies.filter((v) => v.body.isValid === true).length),
    nothingFromVerify: report.check('declarations stored by the 200 verifies', 0, declarationsAfterVerifies - declarationsBefore),
    settled: report.check('flood payments settled', 8, settles.filter((s) => s.success).length),
    capped: report.check('catalog rows of the payTo (the cap)', MAX_PER_PAYTO, rows),
    noneWaiting: report.check('declarations left waiting once indexed', 0, await count(`SELECT count(*)::int AS n FROM discovery_declarations`)),
  };
  report.save();
  expect(checks).toEqual(Object.fromEntries(Object.keys(checks).map((k) => [k, true])));
});

it('(discovery 4) resource URLs pointing at private addresses are refused; the payments settle', async () => {
  const report = abuseReport(
    'discovery-4-private-urls',
    'Resource URLs pointing at private addresses',
    'settled payments declaring resources at loopback, RFC 1918, link-local (cloud metadata), IPv4-mapped IPv6, decimal-IPv4, localhost and .internal hosts, which a buyer agent reading the catalog would then call',
  );
  const urls = [
    'http://127.0.0.1:8080/admin',
    'http://10.0.0.5/internal',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:127.0.0.1]/x',
    'http://2130706433/x',
    'http://localhost:3000/x',
    'http://metadata.google.internal/computeMetadata/v1/',
    'file:///etc/passwd',
  ];
  const answers = [];
  for (const url of urls) answers.push(await settle(await paymentWith(declaration(), { url })));
  await indexed();
  for (const [i, a] of answers.entries()) report.note(`${urls[i]}: success ${a.success}, ${a.bazaar?.status}: ${a.bazaar?.rejectedReason}`);
  const listed = await bazaarClient().listResources({ limit: 100 });
  const checks = {
    settled: report.check('payments settled', urls.length, answers.filter((a) => a.success).length),
    refused: report.check('declarations refused with a reason naming resource.url', urls.length, answers.filter((a) => a.bazaar?.status === 'rejected' && a.bazaar.rejectedReason?.startsWith('resource.url:')).length),
    listed: report.check('private resources listed', 0, listed.items.filter((i) => !i.resource.startsWith(PUBLIC)).length),
  };
  report.save();
  expect(checks).toEqual(Object.fromEntries(Object.keys(checks).map((k) => [k, true])));
});
