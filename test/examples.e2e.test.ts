// The files in examples/, run unchanged against `npm run dev` itself (the compiled dev stack as a child
// process: anvil with Circle's USDC at Circle's Base Sepolia address, the API, the worker): x402's own
// quick-start merchant (`price: "$0.01"` on eip155:84532) paid by a stock @x402/fetch buyer with default
// spend controls, then Permit2 `exact` and `upto`. Also what the dev stack shows an operator: the banner's
// pages, `GET /`, every queue in Bull Board and /v1/queues, the worker's metrics.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Contract, JsonRpcProvider, Wallet } from 'ethers';
import { networkByChainId } from '@facilitator/core';
import { readDevnetInfo, type DevnetInfo } from '@facilitator/evm-devnet';
import { MerchantAction } from '@facilitator/merchants';
import { createEmptyDatabase, type EmptyTestDatabase } from './support/database';
import { startNodeProgram, type LongRunningProgram } from './support/long-running-program';
import { merchantProof } from './support/merchant-client';
import { runNodeProgram } from './support/node-program';
import { freePort } from './support/ports';
import { valueOf } from './support/prometheus-text';
import { QUEUE_BACKEND, REDIS_URL } from './support/test-stack';

const ROOT = path.resolve(__dirname, '..');
const EXAMPLES = path.join(ROOT, 'examples');
const CIRCLE_BASE_SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const FEE = 10_000n;
const ADMIN = { username: 'admin', password: 'dev-admin-password' };

let dir: string;
let database: EmptyTestDatabase;
let dev: LongRunningProgram;
let apiUrl: string;
let rpcUrl: string;
let workerMetricsPort: number;
let info: DevnetInfo;
let provider: JsonRpcProvider;
let usdc: Contract;
const programs: LongRunningProgram[] = [];
const OPERATOR_KEY = 'dev-operator-key-1';

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'facilitator-examples-'));
  database = await createEmptyDatabase();
  const [port, devnetPort] = [await freePort(), await freePort()];
  workerMetricsPort = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  // nothing of this machine's configuration but where Postgres and Redis are, and ports that are free
  dev = startNodeProgram([path.join(ROOT, 'apps/devstack/dist/main.js')], {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    DEV_STACK_DIR: dir,
    DATABASE_URL: database.url,
    REDIS_URL,
    QUEUE_BACKEND,
    QUEUE_PREFIX: `ex${Date.now().toString(36)}`,
    PORT: String(port),
    DEVNET_PORT: String(devnetPort),
    WORKER_METRICS_PORT: String(workerMetricsPort),
    LOG_LEVEL: 'warn',
    // GET /v1/queues is an operator route (issue 40, 7c): an operator of the dev stack sets a key to read it
    API_KEYS: OPERATOR_KEY,
  });
  await dev.printed('Ctrl-C stops everything', 180_000);
  info = readDevnetInfo(path.join(dir, 'devnet.json'));
  rpcUrl = info.rpcUrl;
  provider = new JsonRpcProvider(rpcUrl, info.chainId, { staticNetwork: true });
  usdc = new Contract(info.token.address, ['function balanceOf(address) view returns (uint256)'], provider);
}, 240_000);

afterAll(async () => {
  for (const program of programs) await program.stop();
  provider?.destroy();
  await dev?.stop(30_000);
  await database?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

async function balances() {
  const { payer, merchant, treasury } = info.accounts;
  const [p, m, t] = await Promise.all([payer, merchant, treasury].map((a) => usdc.balanceOf(a.address) as Promise<bigint>));
  return { payer: p, merchant: m, treasury: t };
}

/** Starts an example merchant on a free port with the dev stack's facilitator; returns its URL's origin. */
async function startMerchant(file: string, env: Record<string, string> = {}): Promise<string> {
  const port = await freePort();
  const merchant = startNodeProgram([path.join(EXAMPLES, file)], { PATH: process.env.PATH, FACILITATOR_URL: `${apiUrl}/x402`, PORT: String(port), ...env });
  programs.push(merchant);
  await merchant.printed('listening on');
  return `http://127.0.0.1:${port}`;
}

/** Runs an example buyer against `url`; returns what it printed, failing on a non-zero exit. */
async function runBuyer(file: string, url: string): Promise<string> {
  const run = await runNodeProgram([path.join(EXAMPLES, file)], { PATH: process.env.PATH, MERCHANT_URL: url, RPC_URL: rpcUrl });
  expect({ file, code: run.code, stderr: run.stderr }).toEqual({ file, code: 0, stderr: '' });
  return run.stdout;
}

/** The receipt the buyer printed after "paid:" (decoded PAYMENT-RESPONSE). */
function paidReceipt(stdout: string): string {
  return stdout.slice(stdout.indexOf('paid:'));
}

describe('npm run dev', () => {
  it("places the USDC at Circle's Base Sepolia address, under Circle's EIP-712 name and version, and says so", async () => {
    expect(networkByChainId(84532)!.usdc.address).toBe(CIRCLE_BASE_SEPOLIA_USDC);
    expect(info.token).toEqual({ address: CIRCLE_BASE_SEPOLIA_USDC, symbol: 'USDC', decimals: 6, eip712: { name: 'USDC', version: '2' } });
    expect(await provider.getCode(CIRCLE_BASE_SEPOLIA_USDC)).not.toBe('0x');
    const token = new Contract(CIRCLE_BASE_SEPOLIA_USDC, ['function name() view returns (string)', 'function version() view returns (string)'], provider);
    expect([await token.name(), await token.version()]).toEqual(['USDC', '2']);
    expect(dev.output()).toContain(`USDC         ${CIRCLE_BASE_SEPOLIA_USDC}, Circle's Base Sepolia address`);
  });

  it('lists the pages, the x402 facilitator URL, the login of the queue dashboard and the worker metrics in its banner', () => {
    const banner = dev.output();
    for (const page of ['/docs', '/status', '/merchant', '/admin/queues']) expect(banner).toContain(`page         ${apiUrl}${page}`);
    expect(banner).toContain(`x402         facilitator URL for @x402/* and x402-* packages: ${apiUrl}/x402`);
    expect(banner).toContain(`user ${ADMIN.username}, password ${ADMIN.password}`);
    expect(banner).toContain(`worker http://127.0.0.1:${workerMetricsPort}/metrics`);
  });

  it('answers GET / with an index of what is served', async () => {
    const res = await fetch(`${apiUrl}/`, { headers: { Accept: 'application/json' } });
    expect(res.status).toBe(200);
    const index = (await res.json()) as { x402: { facilitator_url_path: string }; pages: Array<{ path: string }> };
    expect(index.x402.facilitator_url_path).toBe('/x402');
    expect(index.pages.map((p) => p.path)).toEqual(['/docs', '/status', '/merchant', '/admin/queues']);
  });

  it('shows every queue, maintenance included, in Bull Board and GET /v1/queues', async () => {
    const auth = `Basic ${Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64')}`;
    const board = await fetch(`${apiUrl}/admin/queues/api/queues`, { headers: { Authorization: auth } });
    expect(board.status).toBe(200);
    expect(((await board.json()) as { queues: Array<{ name: string }> }).queues.map((q) => q.name).sort()).toEqual(['maintenance', 'settlement', 'webhook']);
    expect((await fetch(`${apiUrl}/v1/queues`)).status).toBe(401);
    const queues = (await (await fetch(`${apiUrl}/v1/queues`, { headers: { 'X-API-Key': OPERATOR_KEY } })).json()) as { queues: Array<{ name: string }> };
    expect(queues.queues.map((q) => q.name)).toEqual(['settlement', 'webhook', 'maintenance']);
  });
});

describe('examples/, unchanged, against npm run dev', () => {
  it("x402's quick-start: merchant.mjs ($0.01, eip155:84532) is paid by buyer.mjs (default spend controls) and serves it", async () => {
    const merchantUrl = await startMerchant('merchant.mjs');
    const before = await balances();
    const out = await runBuyer('buyer.mjs', `${merchantUrl}/weather`);
    expect(out).toContain("200 { weather: 'sunny', temperature: 21 }");
    expect(paidReceipt(out)).toMatch(/success: true[\s\S]*transaction: '0x[0-9a-f]{64}'/);
    const after = await balances();
    expect({ payer: after.payer - before.payer, merchant: after.merchant - before.merchant, treasury: after.treasury - before.treasury }).toEqual({
      payer: -10_000n,
      merchant: 10_000n - FEE,
      treasury: FEE,
    });
  });

  it('the fees are in the worker metrics the banner names', async () => {
    const text = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
    expect(valueOf(text, 'x402_fees_collected_total')).toBeGreaterThanOrEqual(1);
  });

  it('Permit2: merchant-permit2.mjs is paid by buyer-permit2.mjs, whose EIP-2612 permit sets its Permit2 allowance (no gas)', async () => {
    const merchantUrl = await startMerchant('merchant-permit2.mjs');
    const before = await balances();
    const out = await runBuyer('buyer-permit2.mjs', `${merchantUrl}/weather`);
    expect(out).toContain("200 { weather: 'sunny', temperature: 21 }");
    expect(paidReceipt(out)).toMatch(/success: true/);
    const after = await balances();
    expect({ payer: after.payer - before.payer, merchant: after.merchant - before.merchant, treasury: after.treasury - before.treasury }).toEqual({
      payer: -10_000n,
      merchant: 10_000n - FEE,
      treasury: FEE,
    });
    expect(await provider.getBalance(info.accounts.payer.address)).toBe(0n);
  });

  it('upto: merchant-upto.mjs, with its settle key, settles what was used ($0.042 of at most $0.10) from buyer-upto.mjs', async () => {
    const wallet = new Wallet(info.accounts.merchant.privateKey);
    const proof = await merchantProof(wallet, wallet.address, MerchantAction.EnableSettleProtection);
    const enabled = await fetch(`${apiUrl}/v1/merchants/${wallet.address}/settle-key`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ proof }),
    });
    expect(enabled.status).toBe(200);
    const { settle_key: settleKey } = (await enabled.json()) as { settle_key: string };
    const merchantUrl = await startMerchant('merchant-upto.mjs', { SETTLE_KEY: settleKey });
    const before = await balances();
    const out = await runBuyer('buyer-upto.mjs', `${merchantUrl}/generate`);
    expect(out).toContain("200 { text: 'generated', billed: '$0.042' }");
    expect(paidReceipt(out)).toMatch(/amount: '42000'/);
    const after = await balances();
    expect({ payer: after.payer - before.payer, merchant: after.merchant - before.merchant, treasury: after.treasury - before.treasury }).toEqual({
      payer: -42_000n,
      merchant: 42_000n - FEE,
      treasury: FEE,
    });
  });
});
