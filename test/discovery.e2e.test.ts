// The x402 `bazaar` discovery catalog (issue 45) end to end: a stock @x402/express merchant declares its
// routes (`declareDiscoveryExtension`, registered with `bazaarResourceServerExtension`), a stock @x402/fetch
// buyer pays through our facilitator (/x402), and the real `withBazaar()` client from @x402/extensions lists
// and searches what settled. A declaration whose info fails its schema is paid for like any other and never
// listed. Anvil with Circle's USDC, the compiled worker, the API in process.
import express from 'express';
import { getAddress } from 'ethers';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension, declareDiscoveryExtension, withBazaar } from '@x402/extensions/bazaar';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi } from '../apps/api/src/build-api';
import { LocalServers } from './support/local-servers';
import { startTestStack, type TestStack } from './support/test-stack';
import { until } from './support/until';

const PRICE = 20_000n;
let stack: TestStack;
const servers = new LocalServers();
let facilitatorUrl: string;
let merchantUrl: string;
let payTo: string;
/** what the merchant's facilitator client read from our EXTENSION-RESPONSES header, per call */
const extensionResponses: Array<{ call: 'verify' | 'settle'; bazaar: unknown }> = [];

/** The stock client, recording the `extensionResponses` it decoded from each answer. */
class RecordingFacilitatorClient extends HTTPFacilitatorClient {
  override async verify(...args: Parameters<HTTPFacilitatorClient['verify']>) {
    const answer = await super.verify(...args);
    extensionResponses.push({ call: 'verify', bazaar: (answer as { extensionResponses?: Record<string, unknown> }).extensionResponses?.bazaar });
    return answer;
  }
  override async settle(...args: Parameters<HTTPFacilitatorClient['settle']>) {
    const answer = await super.settle(...args);
    extensionResponses.push({ call: 'settle', bazaar: (answer as { extensionResponses?: Record<string, unknown> }).extensionResponses?.bazaar });
    return answer;
  }
}

beforeAll(async () => {
  // the merchant listens on 127.0.0.1: private URLs are allowed here (test/abuse/discovery.test.ts proves the refusal)
  stack = await startTestStack({ env: { DISCOVERY_ALLOW_PRIVATE_URLS: 'true' } });
  await stack.startWorker();
  facilitatorUrl = `${await servers.listen(stack.api.app)}/x402`;

  const token = getAddress(stack.devnet.token) as `0x${string}`;
  payTo = getAddress(stack.devnet.accounts.merchant.address);
  const resourceServer = new x402ResourceServer(new RecordingFacilitatorClient({ url: facilitatorUrl }))
    .register('eip155:84532', new ExactEvmServerScheme())
    .registerExtension(bazaarResourceServerExtension);
  const accepts = { scheme: 'exact', network: 'eip155:84532' as const, payTo, price: { amount: PRICE.toString(), asset: token, extra: { name: 'USDC', version: '2' } } };
  const merchant = express();
  merchant.use(
    paymentMiddleware(
      {
        'GET /weather/:city': {
          accepts,
          description: 'Hourly weather forecast for a city',
          mimeType: 'application/json',
          serviceName: 'Sunny Forecasts',
          tags: ['weather', 'forecast'],
          extensions: {
            ...declareDiscoveryExtension({
              input: { units: 'metric' },
              inputSchema: { properties: { units: { type: 'string', enum: ['metric', 'imperial'] } } },
              output: { example: { forecast: 'sunny', temperature: 21 } },
            }),
          },
        },
        'GET /stock-quote': {
          accepts,
          description: 'A stock quote whose declaration does not match its own schema',
          extensions: {
            // info says units is 5; its schema says a string: declared, paid, never listed
            ...declareDiscoveryExtension({ input: { units: 5 }, inputSchema: { properties: { units: { type: 'string' } } } }),
          },
        },
      },
      resourceServer,
    ),
  );
  merchant.get('/weather/:city', (req, res) => {
    res.json({ city: req.params.city, forecast: 'sunny', temperature: 21 });
  });
  merchant.get('/stock-quote', (_req, res) => {
    res.json({ symbol: 'X', price: 1 });
  });
  merchantUrl = await servers.listen(merchant);
});

afterAll(async () => {
  await servers.close();
  await stack?.stop();
});

/** The first answer of `read` that is not undefined, polled (the indexer lists within a second). */
async function eventually<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  let value: T | undefined;
  await until(what, async () => (value = await read()) !== undefined);
  return value!;
}

function buyer() {
  const client = new x402Client()
    .register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(stack.devnet.accounts.payer.privateKey as `0x${string}`)))
    .setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: getAddress(stack.devnet.token), maxAmountPerPayment: '1000000' }] });
  return wrapFetchWithPayment(fetch, client);
}

describe('bazaar discovery through our facilitator', () => {
  it('/x402/supported lists bazaar among its extensions', async () => {
    const res = await stack.http.get('/x402/supported');
    expect(res.body.extensions).toContain('bazaar');
  });

  it('after one paid request, the real withBazaar client lists and searches the declared resource, for the payTo paid', async () => {
    const pay = buyer();
    const paid = await pay(`${merchantUrl}/weather/paris?units=metric`);
    expect(paid.status).toBe(200);

    const bazaar = withBazaar(new HTTPFacilitatorClient({ url: facilitatorUrl })).extensions.bazaar;
    const listed = await eventually('the resource is listed', async () => {
      const page = await bazaar.listResources({ type: 'http' });
      return page.items.length > 0 ? page : undefined;
    });
    const resource = `${merchantUrl}/weather/:city`;
    expect(listed).toMatchObject({ x402Version: 2, pagination: { limit: 20, offset: 0, total: 1 } });
    const [item] = listed.items;
    expect(item).toMatchObject({
      resource,
      type: 'http',
      x402Version: 2,
      description: 'Hourly weather forecast for a city',
      mimeType: 'application/json',
      serviceName: 'Sunny Forecasts',
      tags: ['weather', 'forecast'],
      accepts: [{ scheme: 'exact', network: 'eip155:84532', amount: PRICE.toString(), payTo }],
      extensions: { bazaar: { routeTemplate: '/weather/:city', info: { input: { type: 'http', method: 'GET', queryParams: { units: 'metric' } } } } },
      stats: { paymentsSettled: 1, settleSuccessRate: 1, medianPrice: PRICE.toString() },
    });
    expect(Date.parse(item.lastUpdated)).not.toBeNaN();

    const found = await bazaar.search({ query: 'weather forecast' });
    expect(found).toMatchObject({ x402Version: 2, partialResults: false, pagination: { cursor: null } });
    expect(found.resources.map((r) => r.resource)).toEqual([resource]);
    expect((await bazaar.search({ query: 'submarine' })).resources).toEqual([]);
    // filters: the payTo paid, the scheme and network it accepts, the extension it carries
    expect((await bazaar.listResources({ payTo, scheme: 'exact', network: 'eip155:84532', extensions: 'bazaar' })).items).toHaveLength(1);
    expect((await bazaar.listResources({ payTo: getAddress(stack.devnet.accounts.payer.address) })).items).toEqual([]);
    expect((await bazaar.listResources({ type: 'mcp' })).items).toEqual([]);

    // the merchant's facilitator client read our EXTENSION-RESPONSES header: processing at verify, success at settle
    expect(extensionResponses).toEqual([
      { call: 'verify', bazaar: { status: 'processing' } },
      { call: 'settle', bazaar: { status: 'success' } },
    ]);
  });

  it('route templates: another city is the same resource; a second payment by the same payer counts once', async () => {
    const pay = buyer();
    expect((await pay(`${merchantUrl}/weather/rome`)).status).toBe(200);
    const bazaar = withBazaar(new HTTPFacilitatorClient({ url: facilitatorUrl })).extensions.bazaar;
    await until('the second payment is counted', async () => {
      const { rows } = await stack.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM discovery_declarations`);
      return rows[0].n === 0;
    });
    // a query not asked before: answers are kept a few seconds per distinct query
    const page = await bazaar.listResources({ limit: 5 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ resource: `${merchantUrl}/weather/:city`, stats: { paymentsSettled: 1 } });
    const { rows: payers } = await stack.db.pool.query(`SELECT payer, settled FROM discovery_payers`);
    expect(payers).toEqual([{ payer: stack.devnet.accounts.payer.address.toLowerCase(), settled: 2 }]);
  });

  it('a declaration whose info fails its schema is paid for, reported rejected with the field, and never listed', async () => {
    extensionResponses.length = 0;
    const pay = buyer();
    const paid = await pay(`${merchantUrl}/stock-quote`);
    expect(paid.status).toBe(200);
    const rejectedReason = 'extensions.bazaar.info.input.queryParams.units: does not match the declaration\'s schema: must be string';
    expect(extensionResponses).toEqual([
      { call: 'verify', bazaar: { status: 'rejected', rejectedReason } },
      { call: 'settle', bazaar: { status: 'rejected', rejectedReason } },
    ]);
    const stored = await eventually('the rejection is recorded for the merchant', async () => {
      const { rows } = await stack.db.pool.query(`SELECT resource_key, listing, rejected_reason, rejected_field FROM discovery_resources WHERE resource_url LIKE '%/stock-quote'`);
      return rows[0];
    });
    expect(stored).toEqual({
      resource_key: `http GET ${merchantUrl}/stock-quote`,
      listing: null,
      rejected_field: 'extensions.bazaar.info.input.queryParams.units',
      rejected_reason: "does not match the declaration's schema: must be string",
    });
    const bazaar = withBazaar(new HTTPFacilitatorClient({ url: facilitatorUrl })).extensions.bazaar;
    expect((await bazaar.search({ query: 'stock quote' })).resources).toEqual([]);
    expect((await bazaar.listResources({ limit: 100 })).items.map((i) => i.resource)).toEqual([`${merchantUrl}/weather/:city`]);
  });

  it('list and search are rate-limited with verify and settle, refused in the x402 shape', async () => {
    const limited = buildApi(loadConfig({ ...stack.env, RATE_LIMIT_MAX: '2', QUEUE_PREFIX: `${stack.env.QUEUE_PREFIX}rl` }), createSilentLogger());
    try {
      const answers = [];
      for (const path of ['/x402/discovery/resources', '/x402/discovery/search?query=weather', '/x402/discovery/resources']) {
        answers.push(await supertest(limited.app).get(path));
      }
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
      expect(answers[2].body).toEqual({ errorReason: 'rate_limited', errorMessage: expect.any(String) });
    } finally {
      await limited.close();
    }
  });

  it('bad queries are 400 in the x402 refusal shape', async () => {
    const limit = await stack.http.get('/x402/discovery/resources?limit=1000');
    expect(limit.status).toBe(400);
    expect(limit.body).toEqual({ errorReason: 'invalid_payload', errorMessage: expect.stringContaining('limit') });
    const noQuery = await stack.http.get('/x402/discovery/search');
    expect(noQuery.status).toBe(400);
    expect(noQuery.body.errorMessage).toContain('query');
    const unknown = await stack.http.get('/x402/discovery/resources?colour=red');
    expect(unknown.status).toBe(400);
    expect(unknown.body.errorMessage).toContain('colour');
    const payTo = await stack.http.get('/x402/discovery/resources?payTo=nobody');
    expect(payTo.status).toBe(400);
  });
});
