// The operator's `facilitator executor status|setup`, compiled and run as a child process against anvil
// with Circle's USDC: the treasury's EIP-7702 delegation to the settlement executor, set up for real.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hashAuthorization, Wallet } from 'ethers';
import { startDevnet, type Devnet } from '@facilitator/evm-devnet';
import { executorTargets } from '@facilitator/payment-mechanisms';
import { executorStatus, type ExecutorConfig } from '@facilitator/evm-executor';
import { runNodeProgram, type ProgramRun } from './support/node-program';

const CLI = path.resolve(__dirname, '../apps/cli/dist/main.js');

/** Runs the compiled CLI with only PATH and the given variables (never this process's environment). */
function cli(args: string[], env: Record<string, string>): Promise<ProgramRun> {
  // DEV_STACK_DIR where no dev stack is: a running `npm run dev` on this machine gives these commands nothing
  return runNodeProgram([CLI, ...args], { PATH: process.env.PATH ?? '', DEV_STACK_DIR: path.join(tmpdir(), 'no-dev-stack-here'), ...env } as NodeJS.ProcessEnv);
}

let devnet: Devnet;
let env: Record<string, string>;
let config: ExecutorConfig;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" first (npm test does)`);
  devnet = await startDevnet({ relayerCount: 2 });
  const { treasury, relayers } = devnet.accounts;
  // what the worker is given: its keys and the chain variables
  env = {
    RPC_URL_84532: devnet.rpcUrl,
    TOKEN_ADDRESS_84532: devnet.token,
    TREASURY_PRIVATE_KEY: treasury.privateKey,
    RELAYER_PRIVATE_KEYS: relayers.map((r) => r.privateKey).join(','),
  };
  const targets = executorTargets({ chainId: devnet.chainId, tokenAddress: devnet.token.toLowerCase() });
  config = { chainId: devnet.chainId, token: devnet.token, targets, treasury: treasury.address, fee: 10_000n, relayers: relayers.map((r) => r.address) };
});
afterAll(() => devnet?.stop());

// one devnet, in order: before the set-up, the set-up, a second set-up, and the status after it
describe('executor status and setup', () => {
  it('status before the set-up exits 2 and says the treasury is not delegated', async () => {
    const run = await cli(['executor', 'status', '--network', 'base-sepolia'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/state\s+not_delegated/);
    expect(run.stdout).toMatch(/why\s+the treasury has no delegation/);
    expect(run.stdout).toContain(`relayers  ${config.relayers.join(', ')}`);
    expect(run.stdout).toContain('facilitator executor setup --network eip155:84532');
  });

  it('setup deploys the executor and delegates the treasury, printing each step; the status is then ready', async () => {
    const run = await cli(['executor', 'setup', '--network', 'eip155:84532'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    const steps = lines.map((l) => /^(checked|deploying|deployed|delegating|delegated) /.exec(l)?.[1]).filter(Boolean);
    expect(steps).toEqual(['checked', 'deploying', 'deployed', 'delegating', 'delegated']);
    expect(run.stdout).toMatch(/checked {5}not_delegated: the treasury has no delegation/);
    expect(run.stdout).toMatch(/deploying {3}0x[0-9a-f]{64} /);
    const executor = /deployed {4}(0x[0-9a-fA-F]{40}) \(block [0-9]+\)/.exec(run.stdout)?.[1];
    expect(executor).toBeDefined();
    expect(run.stdout).toMatch(/delegating {2}0x[0-9a-f]{64} /);
    expect(run.stdout).toMatch(/delegated {3}confirmed in block [0-9]+/);
    expect(run.stdout).toMatch(/state\s+ready/);
    expect(run.stdout).toContain(`executor  ${executor}`);

    expect(await executorStatus(devnet.provider, config)).toMatchObject({ state: 'ready', executor: executor!.toLowerCase() });
    expect(await devnet.provider.getCode(config.treasury)).toBe(`0xef0100${executor!.slice(2).toLowerCase()}`);
  });

  it('setup again sends nothing', async () => {
    const block = await devnet.provider.getBlockNumber();
    const run = await cli(['executor', 'setup'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('already set up');
    expect(run.stdout).toContain('nothing to send');
    expect(run.stdout).not.toMatch(/deploying|delegating/);
    expect(await devnet.provider.getBlockNumber()).toBe(block);
  });

  it('status --json exits 0 with the state ready', async () => {
    const run = await cli(['executor', 'status', '--json'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const status = await executorStatus(devnet.provider, config);
    expect(JSON.parse(run.stdout)).toEqual({
      network: 'eip155:84532',
      token: devnet.token,
      treasury: config.treasury,
      fee: '10000',
      relayers: config.relayers,
      state: 'ready',
      executor: 'executor' in status ? expect.stringMatching(new RegExp(`^${status.executor}$`, 'i')) : 'missing',
    });
  });

  it('status with another FEE_AMOUNT exits 2 and names the fee that differs', async () => {
    const run = await cli(['executor', 'status'], { ...env, FEE_AMOUNT: '5000' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/state\s+wrong_delegate/);
    expect(run.stdout).toContain("the executor's fee is 10000, configured 5000");

    const json = await cli(['executor', 'status', '--json'], { ...env, FEE_AMOUNT: '5000' });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ state: 'wrong_delegate', fee: '5000', why: "the executor's fee is 10000, configured 5000" });
  });
});

// custody: the treasury's key never on the server. The server (relayer keys and the treasury's address only)
// deploys and prints the request; the key signs it elsewhere, with no chain at all; the server submits it.
describe('executor setup without the treasury key on the server', () => {
  let chain: Devnet;
  let server: Record<string, string>;
  let offline: Record<string, string>;
  let chainConfig: ExecutorConfig;
  const dir = mkdtempSync(path.join(tmpdir(), 'executor-authorization-'));
  const file = (name: string) => path.join(dir, name);

  beforeAll(async () => {
    chain = await startDevnet({ relayerCount: 2 });
    const { treasury, relayers } = chain.accounts;
    server = {
      RPC_URL_84532: chain.rpcUrl,
      TOKEN_ADDRESS_84532: chain.token,
      TREASURY_ADDRESS: treasury.address,
      RELAYER_PRIVATE_KEYS: relayers.map((r) => r.privateKey).join(','),
    };
    // the signing machine: the key and nothing else (no RPC: it could not reach a chain if it tried)
    offline = { TREASURY_PRIVATE_KEY: treasury.privateKey };
    const targets = executorTargets({ chainId: chain.chainId, tokenAddress: chain.token.toLowerCase() });
    chainConfig = { chainId: chain.chainId, token: chain.token, targets, treasury: treasury.address, fee: 10_000n, relayers: relayers.map((r) => r.address) };
  });
  afterAll(async () => {
    await chain?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('plain setup refuses without the treasury key, naming --print-authorization', async () => {
    const run = await cli(['executor', 'setup'], server);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe('error: executor setup needs TREASURY_PRIVATE_KEY: the treasury signs the EIP-7702 authorization (or use --print-authorization)');
  });

  it('prints, signs offline, submits: the treasury delegates, and the treasury never sent a transaction', async () => {
    const treasuryEthBefore = await chain.provider.getBalance(chain.accounts.treasury.address);
    const printed = await cli(['executor', 'setup', '--print-authorization', '--out', file('request.json')], server);
    expect(printed.stderr).toBe('');
    expect(printed.code).toBe(0);
    const request = JSON.parse(readFileSync(file('request.json'), 'utf8'));
    expect(request).toMatchObject({ chainId: chain.chainId, treasury: chain.accounts.treasury.address, nonce: '0' });
    expect(printed.stdout).toContain(JSON.stringify(request));

    // an edited request is refused before anything is signed
    writeFileSync(file('edited.json'), JSON.stringify({ ...request, nonce: '7' }));
    const edited = await cli(['executor', 'sign-authorization', '--request', file('edited.json'), '--executor', request.address], offline);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain("the request's digest is not that of its chainId, address and nonce");

    // the server could name any contract: nothing is signed unless the executor was checked
    const unchecked = await cli(['executor', 'sign-authorization', '--request', file('request.json')], offline);
    expect(unchecked.code).toBe(1);
    expect(unchecked.stderr).toContain('sign-authorization needs --rpc-url <url> (the executor is checked on chain, read only) or --executor <address>');
    const other = await cli(['executor', 'sign-authorization', '--request', file('request.json'), '--executor', chain.accounts.merchant.address], offline);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`the request names the executor ${request.address}, not --executor ${chain.accounts.merchant.address}: not signed`);
    // a compromised server's request naming another contract, checked on chain (read only) with this machine's settings
    const checking = { ...offline, TOKEN_ADDRESS_84532: chain.token, RELAYER_ADDRESSES: server.RELAYER_PRIVATE_KEYS.split(',').map((k) => new Wallet(k).address).join(',') };
    const forgedRequest = { ...request, address: chain.token, digest: hashAuthorization({ chainId: BigInt(chain.chainId), address: chain.token, nonce: 0n }) };
    writeFileSync(file('forged-request.json'), JSON.stringify(forgedRequest));
    const onChain = await cli(['executor', 'sign-authorization', '--request', file('forged-request.json'), '--rpc-url', chain.rpcUrl], checking);
    expect(onChain.code).toBe(1);
    expect(onChain.stderr.trim()).toBe(`error: not signed: ${chain.token} does not run the settlement executor`);
    const checkedOnChain = await cli(['executor', 'sign-authorization', '--request', file('request.json'), '--rpc-url', chain.rpcUrl], checking);
    expect(checkedOnChain.stderr).toBe('');
    expect(checkedOnChain.code).toBe(0);

    const signed = await cli(['executor', 'sign-authorization', '--request', file('request.json'), '--executor', request.address, '--out', file('signed.json')], offline);
    expect(signed.stderr).toBe('');
    expect(signed.code).toBe(0);

    // signed by another key: refused with one line, nothing sent
    const stranger = Wallet.createRandom();
    const forged = await stranger.authorize({ address: request.address, nonce: 0n, chainId: BigInt(chain.chainId) });
    writeFileSync(file('forged.json'), JSON.stringify({ chainId: String(chain.chainId), address: request.address, nonce: '0', signature: { r: forged.signature.r, s: forged.signature.s, yParity: forged.signature.yParity } }));
    const refused = await cli(['executor', 'submit-authorization', '--authorization', file('forged.json')], server);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(`error: submit-authorization failed: the authorization is signed by ${stranger.address}, not the treasury ${chain.accounts.treasury.address}`);
    expect(await executorStatus(chain.provider, chainConfig)).toMatchObject({ state: 'not_delegated' });

    const submitted = await cli(['executor', 'submit-authorization', '--authorization', file('signed.json')], server);
    expect(submitted.stderr).toBe('');
    expect(submitted.code).toBe(0);
    expect(submitted.stdout).toContain('delegated   confirmed in block');
    expect(await executorStatus(chain.provider, chainConfig)).toMatchObject({ state: 'ready', executor: request.address.toLowerCase() });
    // the delegation spent the treasury's nonce 0 as an authorization, not as a transaction of its own
    expect(await chain.provider.getTransactionCount(chain.accounts.treasury.address)).toBe(1);
    expect(await chain.provider.getBalance(chain.accounts.treasury.address)).toBe(treasuryEthBefore);

    // a signed authorization cannot be replayed once used: its nonce is spent
    const again = await cli(['executor', 'submit-authorization', '--authorization', file('signed.json')], server);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("the authorization is for the treasury's nonce 0, but its next nonce is 1");
  });
});
