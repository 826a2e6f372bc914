// The merchant CLI, compiled and run as a child process the way a merchant runs it, against a real
// stack: anvil with Circle's USDC, the API listening on a port, the worker, and a webhook receiver.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BaseWallet, encryptKeystoreJson, Wallet } from 'ethers';
import { writeDevnetInfo } from '@facilitator/evm-devnet';
import { newMerchant } from './support/chain-actions';
import { runNodeProgram, type ProgramRun } from './support/node-program';
import { freePort } from './support/ports';
import { startTestStack, TestStack } from './support/test-stack';
import { WebhookReceiver } from './support/webhook-receiver';
import { setTimeout as sleep } from 'node:timers/promises';

const CLI = path.resolve(__dirname, '../apps/cli/dist/main.js');

/** where no dev stack runs: the CLI reads no devnet file unless a test names one */
const NO_DEV_STACK = mkdtempSync(path.join(tmpdir(), 'facilitator-cli-no-dev-stack-'));

/** Runs the compiled CLI with only PATH and the given variables (never this process's environment). */
function cli(args: string[], env: Record<string, string | undefined> = {}, input?: string): Promise<ProgramRun> {
  return runNodeProgram([CLI, ...args], { PATH: process.env.PATH ?? '', DEV_STACK_DIR: NO_DEV_STACK, ...env } as NodeJS.ProcessEnv, input);
}

/** A failure a user sees: exit 1, one line on stderr, no stack trace. */
function expectOneLineError(run: ProgramRun, message: string | RegExp) {
  expect(run.code).toBe(1);
  expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(/^error: /);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  if (typeof message === 'string') expect(run.stderr).toContain(message);
  else expect(run.stderr).toMatch(message);
}

let stack: TestStack;
let receiver: WebhookReceiver;
let server: Server;
let apiUrl: string;
let chainEnv: Record<string, string>;
let keystoreDir: string;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first (npm test does)`);
  [stack, receiver] = await Promise.all([startTestStack(), new WebhookReceiver().start()]);
  await stack.startWorker();
  server = await new Promise<Server>((resolve) => {
    const s = stack.api.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // what a merchant sets: the service's chain variables and the treasury's public address, no secret of ours
  chainEnv = {
    RPC_URL_84532: stack.devnet.rpcUrl,
    TOKEN_ADDRESS_84532: stack.devnet.token,
    TREASURY_ADDRESS: stack.devnet.accounts.treasury.address,
  };
  keystoreDir = mkdtempSync(path.join(tmpdir(), 'facilitator-cli-'));
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await Promise.all([stack?.stop(), receiver?.stop()]);
  if (keystoreDir) rmSync(keystoreDir, { recursive: true, force: true });
  rmSync(NO_DEV_STACK, { recursive: true, force: true });
});

async function allowanceJson(merchant: string): Promise<Record<string, string>> {
  const run = await cli(['allowance', '--merchant', merchant, '--json'], chainEnv);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout);
}

describe('approve, then allowance', () => {
  it('approve --settlements sets fee × n, shows progress until confirmed; allowance then shows it', async () => {
    const merchant = await newMerchant(stack.devnet, { balance: 50_000n, allowance: 0n });
    const none = await cli(['allowance', '--merchant', merchant.address], chainEnv);
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/allowance\s+0\.00 USDC \(0 units\)/);
    expect(none.stdout).toMatch(/covers\s+0 settlements/);
    expect(none.stdout).toContain('facilitator approve --network eip155:84532 --settlements 100');

    const run = await cli(['approve', '--settlements', '7'], { ...chainEnv, MERCHANT_PRIVATE_KEY: merchant.privateKey });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/allowance\s+0\.00 USDC \(0 units\) now → 0\.07 USDC \(70000 units\) = 7 × 0\.01 USDC fee/);
    const hash = /submitted {2}(0x[0-9a-f]{64})/.exec(run.stdout)?.[1];
    expect(hash).toBeDefined();
    expect(run.stdout).toMatch(/confirmed {2}block [0-9]+ \(1\/1 confirmation\)/);
    expect(run.stdout).toContain('covers 7 settlements');
    expect((await stack.devnet.provider.getTransactionReceipt(hash!))?.status).toBe(1);

    expect(await stack.devnet.allowance(merchant.address, stack.devnet.accounts.treasury.address)).toBe(70_000n);
    expect(await allowanceJson(merchant.address)).toEqual({
      network: 'eip155:84532',
      token: stack.devnet.token,
      merchant: merchant.address,
      treasury: stack.devnet.accounts.treasury.address,
      allowance: '70000',
      balance: '50000',
      fee: '10000',
      settlements_covered: '5',
      settlements_by_allowance: '7',
      settlements_by_balance: '5',
    });
    const human = await cli(['allowance', '--merchant', merchant.address.toLowerCase(), '--network', 'base-sepolia'], chainEnv);
    expect(human.stdout).toMatch(/covers\s+5 settlements \(limited by the balance: allowance 7, balance 5\)/);

    // the same allowance again is a no-op, not a second transaction
    const again = await cli(['approve', '--settlements', '7'], { ...chainEnv, MERCHANT_PRIVATE_KEY: merchant.privateKey });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing to send');
    expect(again.stdout).not.toContain('submitted');
  });

  it('approve --amount signs with an encrypted keystore; --rpc-url overrides RPC_URL_84532', async () => {
    const merchant = await newMerchant(stack.devnet, { balance: 0n, allowance: 30_000n });
    const file = path.join(keystoreDir, 'merchant.json');
    writeFileSync(file, await encryptKeystoreJson({ address: merchant.address, privateKey: merchant.privateKey }, 'correct horse', { scrypt: { N: 1024 } }));
    const env = { ...chainEnv, RPC_URL_84532: `http://127.0.0.1:${await freePort()}`, MERCHANT_KEYSTORE_PASSWORD: 'correct horse' };
    const run = await cli(['approve', '--amount', '123456', '--keystore', file, '--rpc-url', stack.devnet.rpcUrl], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`key from keystore ${file}`);
    expect(await stack.devnet.allowance(merchant.address, stack.devnet.accounts.treasury.address)).toBe(123_456n);

    expectOneLineError(await cli(['approve', '--amount', '1', '--keystore', file], { ...chainEnv, MERCHANT_KEYSTORE_PASSWORD: 'wrong' }), `wrong password for the keystore ${file}`);
    // no terminal and no password variable: says how to give one instead of waiting for input
    expectOneLineError(await cli(['approve', '--amount', '1', '--keystore', file], chainEnv), 'set MERCHANT_KEYSTORE_PASSWORD');
  });

  it("the approval_command of an insufficient_allowance error is this CLI's, and running it lets the payment settle", async () => {
    const merchant = await newMerchant(stack.devnet, { balance: 1_000_000n, allowance: 0n });
    const p = await stack.payment({ to: merchant.address });
    const body = p.formA({ payTo: merchant.address });
    expect((await stack.http.post('/v1/verify').send(body)).status).toBe(200);
    const refused = await stack.http.post('/v1/settle').send(body);
    expect(refused.body.error.code).toBe('insufficient_allowance');
    const command: string = refused.body.error.details.approval_command;
    const [program, ...args] = command.split(' ');
    expect(program).toBe('facilitator');

    const run = await cli(args, { ...chainEnv, MERCHANT_PRIVATE_KEY: merchant.privateKey });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect((await allowanceJson(merchant.address)).settlements_by_allowance).toBe('100');

    const settled = await stack.http.post('/v1/settle').send(body);
    expect(settled.status).toBe(200);
    expect(settled.body.success).toBe(true);
  });
});

describe('friendly errors: exit 1 with one line, never a stack trace', () => {
  const someone = '0x00000000000000000000000000000000000000aa';

  it.each([
    ['a malformed address', ['allowance', '--merchant', '0x1234'], {}, '--merchant must be a 0x-prefixed 20-byte hex address (got "0x1234")'],
    ['a wrong checksum', ['allowance', '--merchant', '0x6CF15a51599aEf5e6d42dE0fC181Aa5a1B0E8962'], {}, '--merchant has a wrong checksum'],
    ['a bad treasury', ['allowance', '--merchant', someone, '--treasury', 'nope'], {}, '--treasury must be a 0x-prefixed'],
    ['no treasury', ['allowance', '--merchant', someone], { TREASURY_ADDRESS: undefined }, 'the treasury address is not known: pass --treasury'],
    ['an unknown network', ['allowance', '--merchant', someone, '--network', 'solana'], {}, 'unknown network "solana" (known: eip155:8453'],
    ['no merchant key', ['approve', '--settlements', '1'], {}, 'no merchant key: set MERCHANT_PRIVATE_KEY'],
    ['a malformed key', ['approve', '--settlements', '1'], { MERCHANT_PRIVATE_KEY: '0xabc' }, 'MERCHANT_PRIVATE_KEY must be a 32-byte hex private key'],
    ['neither --settlements nor --amount', ['approve'], { MERCHANT_PRIVATE_KEY: '0x' + '11'.repeat(32) }, 'pass --settlements <n>'],
    ['a decimal --amount', ['approve', '--amount', '1.5'], {}, "--amount is in the token's smallest units"],
    ['a bad RPC URL variable', ['allowance', '--merchant', someone], { RPC_URL_84532: 'ftp://x' }, 'RPC_URL_84532 must be a http or https URL'],
    ['an unknown command', ['allowances'], {}, "unknown command 'allowances'"],
  ])('%s', async (_name, args, env, message) => {
    const run = await cli(args, { ...chainEnv, ...env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('an unreachable RPC', async () => {
    const port = await freePort();
    const run = await cli(['allowance', '--merchant', someone, '--rpc-url', `http://127.0.0.1:${port}/v2/secret-key`], chainEnv);
    expectOneLineError(run, `error: cannot reach the RPC at http://127.0.0.1:${port}/… (--rpc-url): did not answer eth_chainId within 5000 ms: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`);
    expect(run.stderr).not.toContain('secret-key');
  });

  it('an RPC of another chain', async () => {
    expectOneLineError(await cli(['allowance', '--merchant', someone, '--network', 'base', '--rpc-url', stack.devnet.rpcUrl], chainEnv), 'serves chain 84532, not eip155:8453 (Base)');
  });

  it('a merchant without ETH for gas', async () => {
    const broke = Wallet.createRandom();
    expectOneLineError(await cli(['approve', '--settlements', '1'], { ...chainEnv, MERCHANT_PRIVATE_KEY: broke.privateKey }), "has no ETH on Base Sepolia to pay the approve's gas");
  });
});

describe('verify-webhook', () => {
  let deliveries: Array<{ rawBody: string; signature: string; type: string; id: string; timestamp: string; standard: string }>;
  /** the devnet merchant's own webhook secret, fetched with the CLI as a merchant does */
  let WEBHOOK_SECRET: string;
  let secretFile: string;

  beforeAll(async () => {
    const fetched = await cli(['merchant', 'webhook-secret', '--json', '--api', apiUrl], { MERCHANT_PRIVATE_KEY: stack.devnet.accounts.merchant.privateKey });
    expect(fetched.code).toBe(0);
    WEBHOOK_SECRET = JSON.parse(fetched.stdout).secret;
    secretFile = path.join(keystoreDir, 'webhook-secret');
    writeFileSync(secretFile, `${WEBHOOK_SECRET}\n`, { mode: 0o600 });
    const p = await stack.payment();
    const verify = await stack.http.post('/v1/verify').send(p.formB({ webhook_url: receiver.endpoint('cli') }));
    expect(verify.status).toBe(200);
    await stack.http.post('/v1/settle').send({ verification_id: verify.body.verification_id, destination_address: stack.devnet.accounts.merchant.address });
    deliveries = (await receiver.waitFor('cli', 2)).map((d) => ({
      rawBody: d.rawBody,
      signature: String(d.headers['x-webhook-signature']),
      type: String(d.body.event_type),
      id: String(d.headers['webhook-id']),
      timestamp: String(d.headers['webhook-timestamp']),
      standard: String(d.headers['webhook-signature']),
    }));
  });

  it('accepts real deliveries, exactly as received', async () => {
    expect(deliveries.map((d) => d.type).sort()).toEqual(['settlement.completed', 'verification.completed']);
    for (const d of deliveries) {
      const run = await cli(['verify-webhook', '--secret', WEBHOOK_SECRET, '--signature', d.signature], {}, d.rawBody);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^valid \\(${d.type.replace('.', '\\.')} evt_[0-9a-f]{32}\\)\\n$`));
    }
    // the secret may come from WEBHOOK_SECRET instead of the command line
    const fromEnv = await cli(['verify-webhook', '--signature', deliveries[0].signature], { WEBHOOK_SECRET }, deliveries[0].rawBody);
    expect(fromEnv.code).toBe(0);
    // or from a file, out of shell history
    const fromFile = await cli(['verify-webhook', '--secret-file', secretFile, '--signature', deliveries[0].signature], {}, deliveries[0].rawBody);
    expect(fromFile.code).toBe(0);
  });

  it('checks the Standard Webhooks headers too, and refuses a delivery replayed after 5 minutes', async () => {
    const d = deliveries[0];
    const standard = ['--webhook-id', d.id, '--webhook-timestamp', d.timestamp, '--webhook-signature', d.standard];
    const run = await cli(['verify-webhook', '--secret-file', secretFile, ...standard], {}, d.rawBody);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^valid \(/);
    const both = await cli(['verify-webhook', '--secret-file', secretFile, '--signature', d.signature, ...standard], {}, d.rawBody);
    expect(both.code).toBe(0);
    const late = await cli(['verify-webhook', '--secret-file', secretFile, '--webhook-id', d.id, '--webhook-timestamp', String(Number(d.timestamp) - 360), '--webhook-signature', d.standard], {}, d.rawBody);
    expect(late.code).toBe(1);
    expect(late.stdout).toMatch(/^invalid: Standard Webhooks: Message timestamp too old/);
    const other = await cli(['verify-webhook', '--secret', `whsec_${Buffer.alloc(32, 7).toString('base64')}`, ...standard], {}, d.rawBody);
    expect(other.code).toBe(1);
    expect(other.stdout).toMatch(/^invalid: Standard Webhooks: No matching signature found/);
    expectOneLineError(await cli(['verify-webhook', '--secret-file', secretFile, '--webhook-id', d.id], {}, d.rawBody), 'needs all three');
  });

  it('rejects a tampered delivery and says why', async () => {
    const settled = deliveries.find((d) => d.type === 'settlement.completed')!;
    const tampered = settled.rawBody.replace('"settled_amount":"10000"', '"settled_amount":"99990000"');
    expect(tampered).not.toBe(settled.rawBody);
    const run = await cli(['verify-webhook', '--secret', WEBHOOK_SECRET, '--signature', settled.signature], {}, tampered);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^invalid: signature does not match: the body was changed, or the secret is not the one that signed it/);
  });

  it.each([
    ['the wrong secret', (d: { rawBody: string; signature: string }) => [['--secret', 'not-the-secret', '--signature', d.signature], d.rawBody], 'invalid: signature does not match'],
    ['a signature that is not a digest', (d: { rawBody: string; signature: string }) => [['--secret', WEBHOOK_SECRET, '--signature', 'abc'], d.rawBody], 'invalid: x-webhook-signature is not a SHA-256 hex digest'],
    ['a body that is not JSON', (d: { rawBody: string; signature: string }) => [['--secret', WEBHOOK_SECRET, '--signature', d.signature], 'hello'], 'invalid: body is not JSON'],
  ] as const)('rejects %s', async (_name, make, message) => {
    const [args, body] = make(deliveries[0]);
    const run = await cli(['verify-webhook', ...args], {}, body as string);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(message);
  });

  it('without a secret or a body, says what is missing', async () => {
    expectOneLineError(await cli(['verify-webhook', '--signature', deliveries[0].signature], {}, deliveries[0].rawBody), 'pass --secret-file <file>, set WEBHOOK_SECRET, or pass --secret <secret>');
    expectOneLineError(await cli(['verify-webhook', '--secret-file', path.join(keystoreDir, 'missing')], {}, deliveries[0].rawBody), 'pass --signature');
    expectOneLineError(await cli(['verify-webhook', '--secret', 's', '--signature', deliveries[0].signature], {}, ''), 'standard input is empty');
  });
});

describe('status', () => {
  it('shows a verification and its settlement from the API', async () => {
    const p = await stack.payment();
    const verify = await stack.http.post('/v1/verify').send(p.formB());
    const verificationId: string = verify.body.verification_id;
    const settle = await stack.http.post('/v1/settle').send({ verification_id: verificationId, destination_address: stack.devnet.accounts.merchant.address });
    const settlementId: string = settle.body.settlement_id;
    let record: Record<string, unknown> = {};
    for (let i = 0; i < 200 && record.status !== 'settled'; i++) {
      await sleep(50);
      record = (await stack.http.get(`/v1/settlements/${settlementId}`)).body;
    }
    expect(record.status).toBe('settled');

    const s = await cli(['status', settlementId, '--api', apiUrl]);
    expect(s.code).toBe(0);
    expect(s.stdout).toMatch(new RegExp(`settlement\\s+${settlementId}`));
    expect(s.stdout).toMatch(/status\s+settled \(state settled\)/);
    expect(s.stdout).toMatch(/fee\s+10000 units, collected in 0x[0-9a-f]{64}/);
    expect(s.stdout).toContain(String(record.transaction_hash));

    const v = await cli(['status', verificationId], { FACILITATOR_API_URL: apiUrl });
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/status\s+verified/);
    expect(v.stdout).toMatch(new RegExp(`settled by\\s+${String(record.transaction_hash)}`));

    const json = await cli(['status', settlementId, '--api', apiUrl, '--json']);
    expect(JSON.parse(json.stdout)).toEqual(record);
  });

  it('says when an id is unknown, malformed, or the API cannot be reached', async () => {
    expectOneLineError(await cli(['status', `ver_${'0'.repeat(32)}`, '--api', apiUrl]), `not found: no verification with id "ver_${'0'.repeat(32)}"`);
    expectOneLineError(await cli(['status', 'abc', '--api', apiUrl]), '"abc" is not a verification (ver_…) or settlement (stl_…) id');
    const nobody = `http://127.0.0.1:${await freePort()}`;
    expectOneLineError(await cli(['status', `stl_${'0'.repeat(32)}`, '--api', nobody]), `cannot reach the API at ${nobody}: ECONNREFUSED`);
  });
});

describe('merchant', () => {
  const as = (wallet: BaseWallet) => ({ MERCHANT_PRIVATE_KEY: wallet.privateKey, FACILITATOR_API_URL: apiUrl });

  it('webhook-secret prints the secret; --rotate a new one beside the previous', async () => {
    const m = Wallet.createRandom();
    const first = await cli(['merchant', 'webhook-secret', '--json'], as(m));
    expect(first.stderr).toBe('');
    expect(JSON.parse(first.stdout)).toEqual({ merchant: m.address.toLowerCase(), secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
    const again = await cli(['merchant', 'webhook-secret'], as(m));
    expect(again.stdout).toContain(JSON.parse(first.stdout).secret);
    const rotated = await cli(['merchant', 'webhook-secret', '--rotate', '--json'], as(m));
    expect(JSON.parse(rotated.stdout)).toEqual({
      merchant: m.address.toLowerCase(),
      secret: expect.stringMatching(/^whsec_/),
      previous_secret: JSON.parse(first.stdout).secret,
      previous_secret_expires_at: expect.any(String),
    });
    // after a leak: rotate again and cut the grace short; neither earlier secret signs any more
    const cut = await cli(['merchant', 'webhook-secret', '--rotate', '--grace-seconds', '0', '--json'], as(m));
    expect(JSON.parse(cut.stdout)).toEqual({ merchant: m.address.toLowerCase(), secret: expect.stringMatching(/^whsec_/) });
    expect(JSON.parse(cut.stdout).secret).not.toBe(JSON.parse(rotated.stdout).secret);
    expectOneLineError(await cli(['merchant', 'webhook-secret', '--grace-seconds', '0'], as(m)), '--grace-seconds goes with --rotate');
    // the facilitator fixes the chain named in the signature; asking for another is refused before signing
    expectOneLineError(await cli(['merchant', 'webhook-secret', '--network', 'base'], as(m)), "this facilitator's merchant requests are signed for eip155:84532, not eip155:8453");
    expect((await cli(['merchant', 'webhook-secret', '--network', 'eip155:84532', '--json'], as(m))).code).toBe(0);
  });

  it('settle-key turns protection on (the key once) and --revoke off; minimum below the fee only with it on', async () => {
    const m = Wallet.createRandom();
    const refused = await cli(['merchant', 'minimum', '0'], as(m));
    expectOneLineError(refused, 'needs settle protection');
    const on = await cli(['merchant', 'settle-key', '--json'], as(m));
    expect(JSON.parse(on.stdout)).toEqual({ merchant: m.address.toLowerCase(), settle_key: expect.stringMatching(/^fsk_/) });
    // the settle key reads the merchant's own records, and nobody else's
    const key = JSON.parse(on.stdout).settle_key as string;
    const own = await stack.http.post('/v1/verify').send((await stack.payment({ to: m.address })).formB({ seller_address: m.address }));
    const others = await stack.http.post('/v1/verify').send((await stack.payment()).formB());
    const mine = await cli(['status', own.body.verification_id, '--json'], { ...as(m), FACILITATOR_SETTLE_KEY: key });
    expect(mine.code).toBe(0);
    expect(JSON.parse(mine.stdout)).toMatchObject({ id: own.body.verification_id, type: 'verification' });
    expectOneLineError(await cli(['status', others.body.verification_id], { ...as(m), FACILITATOR_SETTLE_KEY: key }), 'not found');
    expectOneLineError(await cli(['status', own.body.verification_id], { ...as(m), FACILITATOR_SETTLE_KEY: 'fsk_wrong' }), 'FACILITATOR_SETTLE_KEY');
    const minimum = await cli(['merchant', 'minimum', '0', '--json'], as(m));
    expect(JSON.parse(minimum.stdout)).toEqual({ merchant: m.address.toLowerCase(), minimum: '0' });
    const off = await cli(['merchant', 'settle-key', '--revoke'], as(m));
    expect(off.code).toBe(0);
    expect(off.stdout).toContain('settle protection is off');
    expectOneLineError(await cli(['merchant', 'minimum', 'ten'], as(m)), '<units> must be a whole number');
    expectOneLineError(await cli(['merchant', 'settle-key'], { FACILITATOR_API_URL: apiUrl }), 'no merchant key');
  });
});

describe("while npm run dev runs, its devnet file stands in for the variables", () => {
  let devStackDir: string;
  beforeAll(() => {
    // the file as the dev stack writes it, describing this stack's running anvil
    devStackDir = mkdtempSync(path.join(tmpdir(), 'facilitator-cli-dev-stack-'));
    writeDevnetInfo(path.join(devStackDir, 'devnet.json'), stack.devnet.info);
  });
  afterAll(() => rmSync(devStackDir, { recursive: true, force: true }));

  it('allowance needs no variable: the chain, token, treasury and merchant come from the file, and it says so', async () => {
    const { devnet } = stack;
    const run = await cli(['allowance', '--json'], { DEV_STACK_DIR: devStackDir });
    expect(run.stderr).toBe(
      `using the running dev stack's ${path.join(devStackDir, 'devnet.json')} for RPC_URL_84532, TOKEN_ADDRESS_84532, TREASURY_ADDRESS, MERCHANT_PRIVATE_KEY\n`,
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      network: 'eip155:84532',
      token: devnet.token,
      merchant: devnet.accounts.merchant.address,
      treasury: devnet.accounts.treasury.address,
      allowance: (await devnet.allowance(devnet.accounts.merchant.address, devnet.accounts.treasury.address)).toString(),
    });
  });

  it('gives nothing when a variable is set, and refuses its accounts on another chain or RPC', async () => {
    const configured = await cli(['allowance', '--json'], { DEV_STACK_DIR: devStackDir, TREASURY_ADDRESS: stack.devnet.accounts.treasury.address });
    // the merchant key was not filled in either: the CLI asks for it, as without a dev stack
    expectOneLineError(configured, 'pass --merchant <address> (or set MERCHANT_PRIVATE_KEY to use its address)');
    for (const args of [['--network', 'base'], ['--rpc-url', stack.devnet.rpcUrl]]) {
      const run = await cli(['allowance', ...args], { DEV_STACK_DIR: devStackDir });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("error: the running dev stack's defaults are for its own chain (eip155:84532 at RPC_URL_84532)");
    }
  });

  it('gives nothing when the stack that wrote the file has stopped (its anvil is gone)', async () => {
    const stopped = mkdtempSync(path.join(tmpdir(), 'facilitator-cli-stopped-'));
    try {
      // a pid that is no process: one that ran and exited
      const gone = (await runNodeProgram(['-e', 'process.stdout.write(String(process.pid))'], { PATH: process.env.PATH ?? '' })).stdout;
      writeDevnetInfo(path.join(stopped, 'devnet.json'), { ...stack.devnet.info, pid: Number(gone) });
      const run = await cli(['allowance', '--json'], { DEV_STACK_DIR: stopped });
      expectOneLineError(run, 'error: the treasury address is not known: pass --treasury <address> or set TREASURY_ADDRESS');
    } finally {
      rmSync(stopped, { recursive: true, force: true });
    }
  });
});
