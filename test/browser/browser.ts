// A real browser for tests: Debian's Chromium driven by playwright-core. Every page a test opens is watched:
// a request that fails (a refused or blocked connection, which is what a request leaving this machine meets)
// or an asset answered with 4xx/5xx is recorded, and the test asserts there were none.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContextOptions, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ROOT = path.resolve(__dirname, '../..');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install it with "apt-get install -y chromium" (.ci/run does), or set CHROMIUM_PATH`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/** Where a test file's screenshots go: test-results/browser/<name>/, emptied first and named in the output. */
export function screenshotFolder(name: string): string {
  const folder = path.join(ROOT, 'test-results', 'browser', name);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  process.stdout.write(`screenshots of "${name}": ${path.relative(ROOT, folder)}\n`);
  return folder;
}

// what a page loads to render itself; API calls a page makes (fetch/xhr) answer 4xx legitimately
const ASSET_TYPES = new Set(['document', 'stylesheet', 'script', 'image', 'font', 'media', 'manifest', 'other']);

const shotsTaken = new Map<string, number>();

export interface WatchedPage {
  page: Page;
  /** every failed request and every asset answered 4xx/5xx, as "<reason> <method> <url>" */
  problems: string[];
  /** every URL the page requested */
  requested: string[];
  /** the whole page, or only `part` of it */
  screenshot(name: string, part?: Locator): Promise<string>;
}

export async function openPage(browser: Browser, folder: string, options: BrowserContextOptions = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, ...options });
  const page = await context.newPage();
  const problems: string[] = [];
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? 'unknown';
    // a page's own polling call cut short by a navigation or reload is not a failure to reach anything
    if (reason === 'net::ERR_ABORTED' && ['fetch', 'xhr'].includes(request.resourceType())) return;
    problems.push(`failed (${reason}) ${request.method()} ${request.url()}`);
  });
  page.on('response', (response) => {
    const request = response.request();
    if (response.status() >= 400 && ASSET_TYPES.has(request.resourceType())) {
      problems.push(`${response.status()} ${request.resourceType()} ${request.method()} ${response.url()}`);
    }
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  return {
    page,
    problems,
    requested,
    async screenshot(name: string, part?: Locator) {
      // numbered in the order taken across the file's pages, so the folder reads as the story of the test
      const shots = (shotsTaken.get(folder) ?? 0) + 1;
      shotsTaken.set(folder, shots);
      const file = path.join(folder, `${String(shots).padStart(2, '0')}-${name}.png`);
      await (part ? part.screenshot({ path: file }) : page.screenshot({ path: file, fullPage: true }));
      return file;
    },
  };
}

/** Requests that left this machine (anything not on loopback, data: or blob:). */
export function externalRequests(urls: readonly string[]): string[] {
  return urls.filter((url) => {
    if (url.startsWith('data:') || url.startsWith('blob:')) return false;
    const host = new URL(url).hostname;
    return !['127.0.0.1', 'localhost', '[::1]'].includes(host);
  });
}
