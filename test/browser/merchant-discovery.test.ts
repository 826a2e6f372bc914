// /merchant's Discovery section in Chromium (issue 45): a stock @x402/express merchant declares two routes for
// the x402 bazaar catalog, a stock @x402/fetch buyer pays both through our facilitator, and the merchant,
// signed in with its payTo key (the typed data signed and pasted, as without a wallet), sees each resource:
// the one listed, and the one not listed with the exact reason and the field at fault.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { getAddress, Wallet } from 'ethers';
import type { Browser, Page } from 'playwright-core';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import { bazaarResourceServerExtension, declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { LocalServers } from '../support/local-servers';
import { startTestStack, type TestStack } from '../support/test-stack';
import { describeNeeding, chromiumMissing } from '../support/system-tools';
import { until } from '../support/until';
import { externalRequests, launchChromium, openPage, screenshotFolder } from './browser';

let stack: TestStack;
let server: Server;
let baseUrl: string;
let merchantUrl: string;
let browser: Browser;
let merchant: Wallet;
const servers = new LocalServers();
const folder = screenshotFolder('merchant-discovery');

/** What `cast wallet sign --data` does with the typed data the page shows: EIP712Domain is implied by the domain. */
function signTypedData(wallet: Wallet, json: string): Promise<string> {
  const { types, domain, message } = JSON.parse(json) as { types: Record<string, Array<{ name: string; type: string }>>; domain: Record<string, unknown>; message: Record<string, unknown> };
  const { EIP712Domain: _implied, ...rest } = types;
  return wallet.signTypedData(domain, rest, message);
}

const cellsOf = (page: Page, column: number) =>
  page.locator('#discovery tbody tr').evaluateAll((rows, i) => rows.map((r) => (r as unknown as { cells: Array<{ textContent: string | null }> }).cells[i].textContent ?? ''), column);

describeNeeding(chromiumMissing(), '/merchant Discovery in Chromium', () => {
  beforeAll(async () => {
    stack = await startTestStack({ env: { DISCOVERY_ALLOW_PRIVATE_URLS: 'true' } });
    merchant = new Wallet(stack.devnet.accounts.merchant.privateKey);
    await stack.startWorker();
    server = stack.api.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const payTo = getAddress(merchant.address);
    const accepts = { scheme: 'exact', network: 'eip155:84532' as const, payTo, price: { amount: '20000', asset: getAddress(stack.devnet.token), extra: { name: 'USDC', version: '2' } } };
    const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: `${baseUrl}/x402` }))
      .register('eip155:84532', new ExactEvmServerScheme())
      .registerExtension(bazaarResourceServerExtension);
    const shop = express();
    shop.use(
      paymentMiddleware(
        {
          'GET /weather': { accepts, description: 'the weather', extensions: { ...declareDiscoveryExtension({ input: { city: 'paris' }, inputSchema: { properties: { city: { type: 'string' } } } }) } },
          'GET /quote': { accepts, description: 'a quote', extensions: { ...declareDiscoveryExtension({ input: { symbol: 42 }, inputSchema: { properties: { symbol: { type: 'string' } } } }) } },
        },
        resourceServer,
      ),
    );
    shop.get(['/weather', '/quote'], (_req, res) => {
      res.json({ ok: true });
    });
    merchantUrl = await servers.listen(shop);
    const buyer = new x402Client()
      .register('eip155:*', new ExactEvmClientScheme(privateKeyToAccount(stack.devnet.accounts.payer.privateKey as `0x${string}`)))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:84532', asset: getAddress(stack.devnet.token), maxAmountPerPayment: '1000000' }] });
    const pay = wrapFetchWithPayment(fetch, buyer);
    for (const path of ['/weather', '/quote']) expect((await pay(`${merchantUrl}${path}`)).status).toBe(200);
    await until('both resources indexed', async () => (await stack.db.pool.query('SELECT count(*)::int AS n FROM discovery_resources')).rows[0].n === 2);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await servers.close();
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await stack?.stop();
  });

  it("shows each of the merchant's resources, listed or not, and for the rejected one the exact reason and the field", async () => {
    const watched = await openPage(browser, folder);
    const { page } = watched;
    await page.goto(`${baseUrl}/merchant`);
    await page.locator('body[data-ready="true"]').waitFor();
    await page.locator('#address').fill(merchant.address);
    await page.locator('#prepare-sign-in').click();
    await page.locator('#manual').waitFor();
    await page.locator('#pasted-signature').fill(await signTypedData(merchant, await page.locator('#typed-data').inputValue()));
    await page.locator('#submit-signature').click();
    await page.locator('#account[data-loaded="true"]').waitFor();

    expect(await page.locator('#discovery-section h2').textContent()).toBe('Discovery');
    const keys = await cellsOf(page, 0);
    expect([...keys].sort()).toEqual([`http GET ${merchantUrl}/quote`, `http GET ${merchantUrl}/weather`]);
    const byKey = async (column: number) => Object.fromEntries((await cellsOf(page, column)).map((v, i) => [keys[i].split('/').pop(), v]));
    expect(await byKey(2)).toEqual({ weather: 'listed', quote: 'not listed' });
    expect(await byKey(3)).toEqual({ weather: '', quote: "does not match the declaration's schema: must be string" });
    expect(await byKey(4)).toEqual({ weather: '', quote: 'extensions.bazaar.info.input.queryParams.symbol' });
    expect(await byKey(5)).toEqual({ weather: '1', quote: '1' });
    await watched.screenshot('discovery', page.locator('#discovery-section'));

    expect(watched.problems).toEqual([]);
    expect(externalRequests(watched.requested)).toEqual([]);
    await page.context().close();
  });
});
