// `npm run demo`, compiled and run as a child process against a running stack (API on a port, worker,
// anvil with Circle's USDC), described by a devnet file as `npm run dev` writes it.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeDevnetInfo } from '@facilitator/evm-devnet';
import { Wallet } from 'ethers';
import { MerchantAction } from '@facilitator/merchants';
import { balances, difference } from './support/chain-actions';
import { merchantCall } from './support/merchant-client';
import { runNodeProgram, type ProgramRun } from './support/node-program';
import { freePort } from './support/ports';
import { startTestStack, TestStack, WEBHOOK_SECRET } from './support/test-stack';

/** the service's master key is nobody's webhook secret */
const WEBHOOK_SECRET_OF_NOBODY = WEBHOOK_SECRET;

const DEMO = path.resolve(__dirname, '../apps/cli/dist/demo/main.js');
const FEE = 10_000n;

let stack: TestStack;
let server: Server;
let apiUrl: string;
let dir: string;
let devnetFile: string;

beforeAll(async () => {
  if (!existsSync(DEMO)) throw new Error(`${DEMO} is missing: run "npm run build" first (npm test does)`);
  stack = await startTestStack();
  await stack.startWorker();
  server = await new Promise<Server>((resolve) => {
    const s = stack.api.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(path.join(tmpdir(), 'facilitator-demo-'));
  devnetFile = path.join(dir, 'devnet.json');
  writeDevnetInfo(devnetFile, stack.devnet.info);
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function demo(args: string[], env: Record<string, string> = {}): Promise<ProgramRun> {
  return runNodeProgram([DEMO, ...args], { PATH: process.env.PATH ?? '', ...env });
}

it('runs one payment end to end and prints each step, the hashes and the balances before and after', async () => {
  const before = await balances(stack.devnet);
  // the demo fetches the merchant's own webhook secret with a request signed by the merchant key
  const run = await demo(['--api', apiUrl, '--devnet-file', devnetFile]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const out = run.stdout;
  const hash = '0x[0-9a-f]{64}';
  expect(out).toMatch(/Balances before\n {2}payer +1000\.00 USDC\n {2}merchant +1000\.00 USDC +allowance to the treasury 100\.00 USDC\n {2}treasury +0\.00 USDC\n/);
  // the dev stack's 100 USDC allowance covers the 100 settlements asked for: the demo does not cut it to 1 USDC
  expect(out).toContain("1. The merchant's allowance to the treasury, 100.00 USDC, already covers 100 settlements (fee 0.01 USDC each): no transaction\n");
  expect(out).not.toContain('submitted');
  expect(out).toMatch(/2\. The payer signs a transfer authorization: 1\.00 USDC to the merchant/);
  expect(out).toMatch(/3\. Verify[^\n]*\n {3}verified {2}ver_[0-9a-f]{32}/);
  expect(out).toMatch(/4\. Settle[^\n]*\n {3}pending {2}stl_[0-9a-f]{32}/);
  expect(out).toMatch(new RegExp(`\\n {3}fee tx +${hash} \\(0\\.01 USDC merchant → treasury`));
  expect(out).toMatch(new RegExp(`\\n {3}transfer tx +${hash} \\(1\\.00 USDC payer → merchant`));
  expect(out).toMatch(/verification\.completed +evt_[0-9a-f]{32} {2}signature valid/);
  expect(out).toMatch(/settlement\.completed +evt_[0-9a-f]{32} {2}signature valid/);
  expect(out).toMatch(
    /Balances after\n {2}payer +999\.00 USDC +\(-1\.00 USDC\)\n {2}merchant +1000\.99 USDC +\(\+0\.99 USDC\) +allowance to the treasury 99\.99 USDC\n {2}treasury +0\.01 USDC +\(\+0\.01 USDC\)\n/,
  );
  expect(out).toContain('Done: the payer paid 1.00 USDC; the merchant received 0.99 USDC, net of the 0.01 USDC fee the treasury collected.');
  expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -1_000_000n, merchant: 1_000_000n - FEE, treasury: FEE });
});

it('raises a short allowance to what the settlements asked for need, and never lowers one', async () => {
  const { devnet } = stack;
  await devnet.approveTreasury(devnet.accounts.merchant.privateKey, 500_000n);
  const run = await demo(['--api', apiUrl, '--devnet-file', devnetFile]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(new RegExp('1\\. The merchant approves the treasury for 100 settlements: 1\\.00 USDC \\(fee 0\\.01 USDC each; it allowed 0\\.50 USDC\\)\\n {3}submitted {2}0x[0-9a-f]{64}'));
  // 1.00 USDC granted, one fee taken
  expect(await devnet.allowance(devnet.accounts.merchant.address, devnet.accounts.treasury.address)).toBe(1_000_000n - FEE);
  // a grant above what is asked stays as it is
  await devnet.approveTreasury(devnet.accounts.merchant.privateKey, 5_000_000n);
  const again = await demo(['--api', apiUrl, '--devnet-file', devnetFile, '--settlements', '3']);
  expect(again.code).toBe(0);
  expect(again.stdout).toContain("1. The merchant's allowance to the treasury, 5.00 USDC, already covers 3 settlements (fee 0.01 USDC each): no transaction\n");
  expect(await devnet.allowance(devnet.accounts.merchant.address, devnet.accounts.treasury.address)).toBe(5_000_000n - FEE);
});

it("settles with the merchant's settle key once settle protection is on, and says how to pass it when it is missing", async () => {
  const merchant = new Wallet(stack.devnet.accounts.merchant.privateKey);
  const enabled = await merchantCall(stack, merchant, MerchantAction.EnableSettleProtection);
  expect(enabled.status).toBe(200);
  try {
    const before = await balances(stack.devnet);
    const keyless = await demo(['--api', apiUrl, '--devnet-file', devnetFile]);
    expect(keyless.code).toBe(1);
    expect(keyless.stderr.trim()).toMatch(/^demo failed: the merchant has settle protection on: pass its settle key with --settle-key <key> or FACILITATOR_SETTLE_KEY \(settle protection is on for /);
    const run = await demo(['--api', apiUrl, '--devnet-file', devnetFile], { FACILITATOR_SETTLE_KEY: enabled.body.settle_key });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Done: the payer paid 1.00 USDC');
    // the keyless run moved nothing: one payment in all
    expect(difference(await balances(stack.devnet), before)).toEqual({ payer: -1_000_000n, merchant: 1_000_000n - FEE, treasury: FEE });
  } finally {
    expect((await merchantCall(stack, merchant, MerchantAction.DisableSettleProtection)).status).toBe(200);
  }
});

it('fails in one line when a webhook signature does not check out (a secret other than the merchant\'s)', async () => {
  const run = await demo(['--api', apiUrl, '--devnet-file', devnetFile, '--price', '0.25'], { WEBHOOK_SECRET: WEBHOOK_SECRET_OF_NOBODY });
  expect(run.code).toBe(1);
  expect(run.stderr.trim()).toBe(
    "demo failed: verification.completed webhook signature is not valid: signature does not match (is WEBHOOK_SECRET the merchant's webhook secret?)",
  );
});

it('says what to do when the stack is not running', async () => {
  const nobody = `http://127.0.0.1:${await freePort()}`;
  const noApi = await demo(['--api', nobody, '--devnet-file', devnetFile]);
  expect(noApi.code).toBe(1);
  expect(noApi.stderr.trim()).toBe(`demo failed: cannot reach the API at ${nobody}: ECONNREFUSED: is "npm run dev" running (and --api its URL)?`);
  const noFile = await demo(['--api', apiUrl, '--devnet-file', path.join(dir, 'missing.json')]);
  expect(noFile.stderr.trim()).toBe(`demo failed: no devnet description at ${path.join(dir, 'missing.json')}: start the stack with "npm run dev" first`);
});
