// /admin/queues in a real browser, as an operator uses it: signed in with basic auth, the settlement and
// webhook queues are listed with their counts after a settlement, and a failed job is retried from the page.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { startTestStack, type TestStack } from '../support/test-stack';
import { WebhookReceiver } from '../support/webhook-receiver';
import { describeNeeding, chromiumMissing } from '../support/system-tools';
import { externalRequests, launchChromium, openPage, screenshotFolder } from './browser';
import { setTimeout as sleep } from 'node:timers/promises';
import supertest from 'supertest';
import { loadConfig } from '@facilitator/config';
import { createSilentLogger } from '@facilitator/logging';
import { buildApi } from '../../apps/api/src/build-api';

const ADMIN = { username: 'operator', password: 'correct horse battery' };
let stack: TestStack;
let server: Server;
let baseUrl: string;
let browser: Browser;
let receiver: WebhookReceiver;
const folder = screenshotFolder('queue-dashboard');

async function settleWithWebhooks(webhookUrl: string): Promise<string> {
  const p = await stack.payment();
  const v = await stack.http.post('/v1/verify').send(p.formB({ webhook_url: webhookUrl }));
  expect(v.status).toBe(200);
  const s = await stack.http.post('/v1/settle').send({ verification_id: v.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
  for (let i = 0; i < 200; i++) {
    const status = await stack.http.get(`/v1/settlements/${s.body.settlement_id}`);
    if (status.body.status === 'settled') return s.body.settlement_id;
    await sleep(50);
  }
  throw new Error('not settled');
}

/** Jobs per state of one queue, as GET /v1/queues reports them (an operator route: asked with an operator key). */
let operatorApi: ReturnType<typeof buildApi> | undefined;
async function countsOf(queue: 'settlement' | 'webhook'): Promise<Record<string, number>> {
  operatorApi ??= buildApi(loadConfig({ ...stack.env, API_KEYS: 'operator-key-1' }), createSilentLogger());
  const res = await supertest(operatorApi.app).get('/v1/queues').set('x-api-key', 'operator-key-1');
  return res.body.queues.find((q: { name: string }) => q.name === queue).counts;
}

async function waitUntil(what: string, condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await condition()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(100);
  }
}

describeNeeding(chromiumMissing(), '/admin/queues in Chromium', () => {
  beforeAll(async () => {
    // one after the other: a browser that fails to start must not leave a stack (anvil) without its stop
    stack = await startTestStack({
      env: { ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password, WEBHOOK_RETRY_DELAYS_MS: '10,10,10,10,10' },
    });
    receiver = await new WebhookReceiver().start();
    browser = await launchChromium();
    server = stack.api.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await stack.startWorker();
  });
  afterAll(async () => {
    await operatorApi?.close();
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await receiver?.stop();
    await stack?.stop();
  });

  it('is refused without credentials and with wrong ones', async () => {
    const anonymous = await openPage(browser, folder);
    // a headless browser has no one to ask for a password: the 401 challenge ends the navigation
    await expect(anonymous.page.goto(`${baseUrl}/admin/queues`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
    await anonymous.page.context().close();
    const wrong = await openPage(browser, folder, { httpCredentials: { username: ADMIN.username, password: 'not the password' } });
    expect((await wrong.page.goto(`${baseUrl}/admin/queues`))?.status()).toBe(401);
    await wrong.page.context().close();
  });

  it('lists both queues with their counts after a settlement, and retries a failed job from the page', async () => {
    // the merchant's endpoint is down: both webhook events of the payment fail all six attempts
    let merchantUp = false;
    const hook = receiver.endpoint('merchant', (_n, _req, res) => res.writeHead(merchantUp ? 200 : 503).end());
    await settleWithWebhooks(hook);
    await receiver.waitFor('merchant', 12);
    await waitUntil('both webhook jobs failed', async () => (await countsOf('webhook')).failed === 2);
    await waitUntil('the settlement job completed', async () => (await countsOf('settlement')).completed === 1);

    const watched = await openPage(browser, folder, { httpCredentials: ADMIN });
    const { page } = watched;
    await page.goto(`${baseUrl}/admin/queues`);
    const settlementCard = page.locator('li', { has: page.locator('a[title="settlement"]') }).last();
    const webhookCard = page.locator('li', { has: page.locator('a[title="webhook"]') }).last();
    await settlementCard.getByText('1 Job', { exact: true }).waitFor({ timeout: 15_000 });
    await webhookCard.getByText('2 Jobs', { exact: true }).waitFor();
    expect(await webhookCard.locator('a[href$="/queue/webhook?status=failed"]').innerText()).toMatch(/failed\s*2/i);
    await watched.screenshot('overview-after-settlement');

    // the failed jobs of the webhook queue, one of which the operator retries now that the merchant is back
    await webhookCard.locator('a[href$="/queue/webhook?status=failed"]').click();
    const jobCards = page.locator('main [class*="card"]', { has: page.locator('a[href*="/queue/webhook/evt_"]') });
    await jobCards.first().waitFor();
    expect(await jobCards.count()).toBe(2);
    await jobCards.first().getByText('delivery failed after 6 attempts: http_503').first().waitFor();
    await watched.screenshot('failed-webhook-jobs');
    const retried = (await jobCards.first().locator('a[href*="/queue/webhook/evt_"]').innerText()).trim();
    merchantUp = true;
    await jobCards.first().locator('button:has(svg.lucide-refresh-cw)').click();
    const confirm = page.getByRole('button', { name: /^(confirm|retry|yes)$/i });
    if (await confirm.isVisible().catch(() => false)) await confirm.click();

    // the job ran again for real: the merchant received the event, and the queue counts say so
    await receiver.waitFor('merchant', 13);
    expect(receiver.deliveries('merchant')[12].headers['webhook-id']).toBe(retried);
    await waitUntil('the retried job completed', async () => {
      const counts = await countsOf('webhook');
      return counts.failed === 1 && counts.completed === 1;
    });
    await page.reload();
    await page.locator('main [class*="card"]', { has: page.locator('a[href*="/queue/webhook/evt_"]') }).first().waitFor();
    expect(await page.locator('a[href*="/queue/webhook/evt_"]').allInnerTexts()).not.toContain(retried);
    await watched.screenshot('after-retry');

    expect(watched.problems).toEqual([]);
    expect(externalRequests(watched.requested)).toEqual([]);
    await page.context().close();
  });
});
