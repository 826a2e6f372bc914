// /status in a real browser, as the public sees it: after real settlements (two settled, one failed, one
// waiting for gas above the cap) every figure on the page is the JSON's it fetched, and that JSON is the
// database's; the page refreshes itself when the waiting settlement goes through; it reads well at 1400 px
// and on a phone; and nothing it loads comes from anywhere but this host.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import type { NetworkStatus, ServiceStatus } from '@facilitator/schemas';
import { startTestStack, type TestStack } from '../support/test-stack';
import { percentileCont, setBaseFeeGwei, settleEveryKind, STATUS_GAS_CAP_GWEI, statusUntil } from '../support/status-scenario';
import { describeNeeding, chromiumMissing } from '../support/system-tools';
import { externalRequests, launchChromium, openPage, screenshotFolder, type WatchedPage } from './browser';

let stack: TestStack;
let server: Server;
let baseUrl: string;
let browser: Browser;
const folder = screenshotFolder('status-page');
const NETWORK = 'eip155:84532';

/** Opens /status and returns the status JSON the page itself fetched and rendered. */
async function openStatus(watched: WatchedPage): Promise<ServiceStatus> {
  const fetched = watched.page.waitForResponse((r) => r.url() === `${baseUrl}/status.json`);
  await watched.page.goto(`${baseUrl}/status`);
  const status = (await (await fetched).json()) as ServiceStatus;
  await watched.page.locator(`#computed-at[data-value="${status.computed_at}"]`).waitFor();
  return status;
}

/** Every figure the page shows for the network, by its data-field, as the raw JSON value it carries. */
async function figuresOn(page: Page): Promise<Record<string, string>> {
  return page.locator(`[data-network="${NETWORK}"] [data-field]`).evaluateAll((nodes) =>
    Object.fromEntries(nodes.map((n) => [n.getAttribute('data-field')!, n.getAttribute('data-value')!])),
  );
}

/** The same figures as the JSON says they are. */
function figuresOf(n: NetworkStatus): Record<string, string> {
  const shown: Record<string, unknown> = { 'waiting.total': n.waiting.total };
  for (const w of ['5m', '1h', '24h'] as const) {
    for (const [k, v] of Object.entries(n.verify[w])) shown[`verify.${w}.${k}`] = v;
    for (const [k, v] of Object.entries(n.settle[w])) shown[`settle.${w}.${k}`] = v;
  }
  for (const r of n.waiting.by_reason) shown[`waiting.${r.reason}`] = r.count;
  for (const e of n.rpc.endpoints) shown[`rpc.${e.endpoint}.up`] = e.up;
  for (const [k, v] of Object.entries(n.fee)) if (k !== 'gas_above_cap') shown[`fee.${k}`] = v;
  return Object.fromEntries(Object.entries(shown).map(([k, v]) => [k, v === null ? 'null' : String(v)]));
}

describeNeeding(chromiumMissing(), '/status in Chromium', () => {
  beforeAll(async () => {
    // one after the other: a browser that fails to start must not leave a stack (anvil) without its stop
    stack = await startTestStack({ env: { MAX_FEE_PER_GAS_GWEI_84532: STATUS_GAS_CAP_GWEI, STATUS_MAX_AGE_MS: '1000' } });
    browser = await launchChromium();
    server = stack.api.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await stack.startWorker();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await stack?.stop();
  });

  it('shows the settlements as the database has them, and refreshes itself when the waiting one settles', async () => {
    const waitingId = await settleEveryKind(stack);
    await statusUntil(stack, (s) => s.networks[0].waiting.total === 1 && s.networks[0].settle['5m'].failed === 1);

    const watched = await openPage(browser, folder);
    const consoleErrors: string[] = [];
    watched.page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    const status = await openStatus(watched);
    const network = status.networks.find((n) => n.network === NETWORK)!;
    await watched.screenshot('settled-failed-and-waiting');
    await watched.screenshot('network-card', watched.page.locator(`[data-network="${NETWORK}"]`));

    // the page shows exactly the JSON it fetched...
    expect(await figuresOn(watched.page)).toEqual(figuresOf(network));
    // ...and the JSON is the database's
    const settled = await stack.db.prisma.settlement.findMany({ where: { chainId: 84532, state: 'settled' } });
    const failed = await stack.db.prisma.settlement.count({ where: { chainId: 84532, state: 'failed' } });
    const waiting = await stack.db.prisma.settlement.findMany({ where: { waitingReason: { not: null } } });
    const verifyMs = (await stack.db.prisma.verification.findMany({ where: { verifyMs: { not: null } } })).map((v) => v.verifyMs!);
    const settleMs = settled.map((s) => s.settledAt!.getTime() - s.createdAt.getTime());
    expect(network.settle['5m']).toEqual({
      settled: 2,
      failed: 1,
      success_rate: 2 / 3,
      p50_ms: roundedFrom(percentileCont(settleMs, 0.5)!, 1),
      p95_ms: roundedFrom(percentileCont(settleMs, 0.95)!, 1),
    });
    expect([settled.length, failed]).toEqual([2, 1]);
    // the JSON rounds to 0.1 ms
    expect(network.verify['5m']).toEqual({
      count: verifyMs.length,
      p50_ms: roundedFrom(percentileCont(verifyMs, 0.5)!, 0.1),
      p95_ms: roundedFrom(percentileCont(verifyMs, 0.95)!, 0.1),
    });
    expect(verifyMs.length).toBeGreaterThanOrEqual(4);
    expect(waiting.map((s) => [s.id, s.waitingReason])).toEqual([[waitingId, 'gas_price_above_cap']]);
    expect(network.waiting).toEqual({ total: 1, by_reason: [{ reason: 'gas_price_above_cap', count: 1, oldest_since: waiting[0].waitingSince!.toISOString() }] });
    expect(network.fee).toMatchObject({ base_fee_per_gas_wei: '10000000000', gas_above_cap: true });

    // in words, as a visitor reads them
    const card = watched.page.locator(`[data-network="${NETWORK}"]`);
    expect(await card.locator('[data-health]').innerText()).toBe('Degraded');
    expect(await card.locator('[data-reason="gas_price_above_cap"]').innerText()).toMatch(/Gas price above our cap/);
    expect(await card.locator('[data-field="settle.5m.success_rate"]').innerText()).toBe('66.7%');
    expect(await card.locator('[data-field="fee.facilitator_fee_units"]').innerText()).toBe('0.01 USDC per settlement');
    expect(await card.locator('[data-field="fee.base_fee_per_gas_wei"]').innerText()).toBe('10 gwei (above cap: settlements wait)');

    // the base fee falls under the cap: the waiting settlement goes through, and the open page shows it by itself
    await setBaseFeeGwei(stack, '0.5');
    await card.locator('[data-field="settle.5m.settled"][data-value="3"]').waitFor({ timeout: 30_000 });
    await card.locator('[data-field="waiting.total"][data-value="0"]').waitFor();
    expect(await card.locator('[data-health]').innerText()).toBe('Operational');
    await watched.screenshot('after-the-wait-settled');

    expect(consoleErrors).toEqual([]);
    expect(watched.problems).toEqual([]);
    expect(externalRequests(watched.requested)).toEqual([]);
    expect(watched.requested.every((url) => url.startsWith(`${baseUrl}/`))).toBe(true);
    await watched.page.context().close();
  }, 90_000);

  it('reads on a phone: one column, nothing wider than the screen', async () => {
    const watched = await openPage(browser, folder, { viewport: { width: 390, height: 844 }, isMobile: true });
    await openStatus(watched);
    const overflow = await watched.page.locator('html').evaluate((html) => html.scrollWidth - html.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await watched.screenshot('phone');
    expect(watched.problems).toEqual([]);
    expect(externalRequests(watched.requested)).toEqual([]);
    await watched.page.context().close();
  });
});

/**
 * A number `exact` rounded to a multiple of `step`, either way at a tie: within half a step. (jest's
 * `closeTo` wants strictly less than half a step, so an exact 10.85 shown as 10.9 failed it.)
 */
function roundedFrom(exact: number, step: number) {
  return {
    asymmetricMatch: (shown: unknown) => typeof shown === 'number' && Math.abs(shown - exact) <= step / 2 + 1e-9,
    toAsymmetricMatcher: () => `a rounding of ${exact} to ${step}`,
  };
}
