// /merchant in a real browser, as a merchant uses it: signed in with a real EIP-712 signature of its payTo
// key (an injected EIP-1193 wallet whose eth_signTypedData_v4 signs with an ethers Wallet, checked by the
// server), it sees its settlements, fees, allowance and webhook deliveries, downloads the CSV, rotates its
// webhook secret (a second signature) and signs out. Without a wallet it signs the typed data shown and pastes.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Wallet } from 'ethers';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { webhookSecretOf } from '../support/merchant-client';
import { FAST_WEBHOOK_RETRIES, settlePaymentsWithWebhooks } from '../support/merchant-page-fixture';
import { startTestStack, type TestStack } from '../support/test-stack';
import { WebhookReceiver } from '../support/webhook-receiver';
import { describeNeeding, chromiumMissing } from '../support/system-tools';
import { externalRequests, launchChromium, openPage, screenshotFolder, type WatchedPage } from './browser';

const PAYMENTS = 3;
let stack: TestStack;
let receiver: WebhookReceiver;
let server: Server;
let baseUrl: string;
let browser: Browser;
let merchant: Wallet;
let settlementIds: string[];
const folder = screenshotFolder('merchant-page');

interface TypedData {
  types: Record<string, Array<{ name: string; type: string }>>;
  domain: Record<string, unknown>;
  message: Record<string, unknown>;
}

/** What a wallet (or `cast wallet sign --data`) does with the typed data: EIP712Domain is implied by the domain. */
function signTypedData(wallet: Wallet, json: string): Promise<string> {
  const { types, domain, message } = JSON.parse(json) as TypedData;
  const { EIP712Domain: _implied, ...rest } = types;
  return wallet.signTypedData(domain, rest, message);
}

/** A page with an EIP-1193 wallet holding the merchant's key; every typed-data request it signed is recorded. */
async function pageWithWallet(): Promise<WatchedPage & { signed: string[] }> {
  const watched = await openPage(browser, folder, { acceptDownloads: true });
  const signed: string[] = [];
  await watched.page.exposeFunction('merchantWalletSign', async (account: string, json: string) => {
    if (account.toLowerCase() !== merchant.address.toLowerCase()) throw new Error(`the wallet holds no key for ${account}`);
    signed.push(json);
    return signTypedData(merchant, json);
  });
  await watched.page.addInitScript((address: string) => {
    const sign = (globalThis as unknown as { merchantWalletSign: (a: string, j: string) => Promise<string> }).merchantWalletSign;
    (globalThis as unknown as { ethereum: unknown }).ethereum = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address];
        if (method === 'eth_signTypedData_v4') return sign(String(params![0]), String(params![1]));
        throw Object.assign(new Error(`unsupported method ${method}`), { code: 4200 });
      },
    };
  }, merchant.address);
  return { ...watched, signed };
}

/** The session token the page sends, as seen on the wire (the page keeps it in memory only). */
function sessionTokenSent(page: Page): Promise<string> {
  return new Promise((resolve) => {
    page.on('request', (request) => {
      const header = request.headers().authorization;
      if (header?.startsWith('Bearer ')) resolve(header.slice('Bearer '.length));
    });
  });
}

function parseCsv(text: string): string[][] {
  return text.trimEnd().split('\r\n').map((line) => [...line.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1].replace(/""/g, '"')));
}

const cellsOf = (page: Page, table: string, column: number) =>
  page.locator(`#${table} tbody tr`).evaluateAll((rows, i) => rows.map((r) => (r as unknown as { cells: Array<{ textContent: string | null }> }).cells[i].textContent ?? ''), column);

describeNeeding(chromiumMissing(), '/merchant in Chromium', () => {
  beforeAll(async () => {
    // one after the other: a browser that fails to start must not leave a stack (anvil) without its stop
    [stack, receiver] = await Promise.all([startTestStack({ env: FAST_WEBHOOK_RETRIES }), new WebhookReceiver().start()]);
    merchant = new Wallet(stack.devnet.accounts.merchant.privateKey);
    await stack.startWorker();
    settlementIds = await settlePaymentsWithWebhooks(stack, receiver, 'merchant-page', PAYMENTS);
    browser = await launchChromium();
    server = stack.api.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await Promise.all([stack?.stop(), receiver?.stop()]);
  });

  it('signs in with the wallet (a real EIP-712 signature) and shows settlements, fees, allowance and deliveries', async () => {
    const watched = await pageWithWallet();
    const { page } = watched;
    const token = sessionTokenSent(page);
    await page.goto(`${baseUrl}/merchant`);
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#wallet-sign-in').isVisible()).toBe(true);
    await watched.screenshot('sign-in');

    await page.locator('#wallet-sign-in').click();
    await page.locator('#account[data-loaded="true"]').waitFor();
    expect(watched.signed).toHaveLength(1);
    expect(JSON.parse(watched.signed[0]).message).toMatchObject({ action: 'session.create', merchant: merchant.address.toLowerCase(), parameters: '{}' });
    expect(await page.locator('#who').textContent()).toContain(merchant.address.toLowerCase());

    // settlements: newest first, as stored
    expect(await cellsOf(page, 'settlements', 0)).toEqual([...settlementIds].reverse());
    expect(await cellsOf(page, 'settlements', 5)).toEqual(Array(PAYMENTS).fill('settled'));
    expect(await cellsOf(page, 'settlements', 4)).toEqual(Array(PAYMENTS).fill('0.01 USDC'));
    // fees and what the allowance still covers, as the chain says
    expect(await page.locator('#fees-paid').textContent()).toBe('0.03 USDC');
    expect(await page.locator('#fee-count').textContent()).toBe(String(PAYMENTS));
    const treasury = stack.devnet.accounts.treasury.address;
    const [allowance, balance] = await Promise.all([stack.devnet.allowance(merchant.address, treasury), stack.devnet.balanceOf(merchant.address)]);
    const covered = ((allowance < balance ? allowance : balance) / 10_000n).toString();
    expect(await page.locator('#allowances td[data-covered]').getAttribute('data-covered')).toBe(covered);
    // deliveries with their attempts: one refused (503) and retried
    expect(await cellsOf(page, 'deliveries', 3)).toEqual(Array(2 * PAYMENTS).fill('delivered'));
    const attempts = await page.locator('#deliveries ol.attempts').evaluateAll((lists) => lists.map((l) => [...l.children].map((li) => li.textContent ?? '')));
    expect(attempts.filter((a) => a.length === 2)).toEqual([[expect.stringContaining('HTTP 503'), expect.stringContaining('HTTP 200')]]);
    await watched.screenshot('signed-in');

    // the CSV download
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#export-csv').click()]);
    expect(download.suggestedFilename()).toBe(`settlements-${merchant.address.toLowerCase()}.csv`);
    const [header, ...rows] = parseCsv(readFileSync((await download.path())!, 'utf8'));
    expect(header[0]).toBe('id');
    expect(rows.map((r) => r[0])).toEqual([...settlementIds].reverse());

    // rotating asks for its own signature, and shows the new secret once; it signs the next delivery
    await page.locator('#rotate-secret').click();
    await page.locator('#new-secret').waitFor();
    expect(watched.signed).toHaveLength(2);
    expect(JSON.parse(watched.signed[1]).message.action).toBe('webhook_secret.rotate');
    const secret = (await page.locator('#secret-value').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    expect(await webhookSecretOf(stack, merchant)).toBe(secret);
    await watched.screenshot('rotated');
    const payment = await stack.payment();
    expect((await stack.http.post('/v1/verify').send(payment.formB({ webhook_url: receiver.endpoint('after-rotation') }))).status).toBe(200);
    const [delivered] = await receiver.waitFor('after-rotation', 1);
    expect(() => new Webhook(secret).verify(delivered.rawBody, delivered.headers as Record<string, string>)).not.toThrow();

    // signing out ends the session on the server too
    const sessionToken = await token;
    expect((await stack.http.get(`/v1/merchants/${merchant.address}/account`).set('authorization', `Bearer ${sessionToken}`)).status).toBe(200);
    await page.locator('#sign-out').click();
    await page.locator('#sign-in').waitFor();
    expect((await stack.http.get(`/v1/merchants/${merchant.address}/account`).set('authorization', `Bearer ${sessionToken}`)).status).toBe(401);
    await watched.screenshot('signed-out');

    expect(watched.problems).toEqual([]);
    expect(externalRequests(watched.requested)).toEqual([]);
    await page.context().close();
  });

  it('without a wallet: shows the typed data to sign, takes a pasted signature, and refuses a wrong one', async () => {
    const watched = await openPage(browser, folder);
    const { page } = watched;
    await page.goto(`${baseUrl}/merchant`);
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#wallet-sign-in').isVisible()).toBe(false);
    await page.locator('#address').fill(merchant.address);

    // a signature by another key is refused, with the server's reason shown
    await page.locator('#prepare-sign-in').click();
    await page.locator('#manual').waitFor();
    await page.locator('#pasted-signature').fill(await signTypedData(Wallet.createRandom() as unknown as Wallet, await page.locator('#typed-data').inputValue()));
    await page.locator('#submit-signature').click();
    await page.locator('#message', { hasText: 'Sign-in refused' }).waitFor();
    expect(await page.locator('#message').textContent()).toContain('not signed by');
    await watched.screenshot('wrong-signature-refused');

    await page.locator('#prepare-sign-in').click();
    await page.locator('#manual').waitFor();
    const typed = JSON.parse(await page.locator('#typed-data').inputValue());
    expect(typed).toMatchObject({ primaryType: 'MerchantRequest', domain: { verifyingContract: expect.any(String) }, message: { action: 'session.create' } });
    await watched.screenshot('typed-data-to-sign');
    await page.locator('#pasted-signature').fill(await signTypedData(merchant, await page.locator('#typed-data').inputValue()));
    await page.locator('#submit-signature').click();
    await page.locator('#account[data-loaded="true"]').waitFor();
    expect(await cellsOf(page, 'settlements', 0)).toEqual([...settlementIds].reverse());

    expect(watched.problems).toEqual([]);
    expect(externalRequests(watched.requested)).toEqual([]);
    await page.context().close();
  });

  it('is served self-contained: its own script and style, a strict content security policy', async () => {
    const res = await stack.http.get('/merchant');
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(res.text).not.toMatch(/https?:\/\//);
    for (const asset of ['page.js', 'page.css']) {
      const served = await stack.http.get(`/merchant/${asset}`);
      expect(served.status).toBe(200);
      expect(served.text).not.toMatch(/https?:\/\//);
    }
  });
});
