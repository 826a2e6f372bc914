// /docs in a real browser: the reference renders from our own assets, lists the operations, and its
// "Try it out" sends the example body to the running API and shows the API's answer.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { startTestStack, type TestStack } from '../support/test-stack';
import { describeNeeding, chromiumMissing } from '../support/system-tools';
import { externalRequests, launchChromium, openPage, screenshotFolder } from './browser';

let stack: TestStack;
let server: Server;
let baseUrl: string;
let browser: Browser;
const folder = screenshotFolder('docs-page');

describeNeeding(chromiumMissing(), '/docs in Chromium', () => {
  beforeAll(async () => {
    // one after the other: a browser that fails to start must not leave a stack (anvil) without its stop
    stack = await startTestStack();
    browser = await launchChromium();
    server = stack.api.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await stack?.stop();
  });

  it.each(['/docs', '/docs/'])('%s renders the reference with every operation, from our own assets', async (path) => {
    const watched = await openPage(browser, folder);
    await watched.page.goto(`${baseUrl}${path}`);
    await watched.page.locator('.opblock').first().waitFor({ timeout: 15_000 });
    await watched.page.waitForLoadState('networkidle');
    await watched.screenshot(path === '/docs' ? 'docs' : 'docs-slash');

    const document = (await stack.http.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(document.paths).flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`));
    const shown = await watched.page.locator('.opblock-summary').evaluateAll((blocks) =>
      blocks.map((b) => `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
    );
    expect(shown.sort()).toEqual(documented.sort());
    expect(shown).toContain('POST /v1/verify');
    expect(await watched.page.title()).toBe('x402 facilitator API');
    expect(watched.problems).toEqual([]);
    expect(externalRequests(watched.requested)).toEqual([]);
    await watched.page.context().close();
  });

  it('"Try it out" on POST /v1/verify sends the example body and shows the API\'s answer', async () => {
    const watched = await openPage(browser, folder);
    const { page } = watched;
    await page.goto(`${baseUrl}/docs/`);
    const operation = page.locator('.opblock-post', { has: page.locator('.opblock-summary-path[data-path="/v1/verify"]') });
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    const body = operation.locator('textarea.body-param__text');
    const example = JSON.parse(await body.inputValue());
    expect(example).toHaveProperty('payment');
    expect(example).toHaveProperty('requirements');

    const [request, response] = await Promise.all([
      page.waitForRequest((r) => r.url() === `${baseUrl}/v1/verify` && r.method() === 'POST'),
      page.waitForResponse((r) => r.url() === `${baseUrl}/v1/verify`),
      operation.getByRole('button', { name: 'Execute' }).click(),
    ]);
    expect(JSON.parse(request.postData() ?? '')).toEqual(example);
    const answer = await response.json();
    // the example's placeholder values are not a payment: the API says so in its error envelope
    expect(response.status()).toBe(400);
    expect(answer.error).toMatchObject({ code: expect.any(String), message: expect.any(String) });

    const shownStatus = operation.locator('.live-responses-table .response .response-col_status').first();
    await shownStatus.waitFor();
    expect((await shownStatus.textContent())?.trim()).toBe('400');
    const shownBody = await operation.locator('.live-responses-table .response .microlight').first().textContent();
    expect(JSON.parse(shownBody ?? '')).toEqual(answer);
    await watched.screenshot('try-it-out-verify', operation);
    expect(watched.problems).toEqual([]);
    expect(externalRequests(watched.requested)).toEqual([]);
    await page.context().close();
  });
});
