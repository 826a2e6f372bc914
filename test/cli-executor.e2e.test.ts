// The operator's `facilitator executor status|setup`, compiled and run as a child process against anvil
// with Circle's USDC: the treasury's EIP-7702 delegation to the settlement executor, set up for real.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startDevnet, type Devnet } from '@facilitator/devnet';
import { executorStatus, type ExecutorConfig } from '@facilitator/settlement-contract';
import { runNodeProgram, type ProgramRun } from './support/node-program';

const CLI = path.resolve(__dirname, '../apps/cli/dist/main.js');

/** Runs the compiled CLI with only PATH and the given variables (never this process's environment). */
function cli(args: string[], env: Record<string, string>): Promise<ProgramRun> {
  return runNodeProgram([CLI, ...args], { PATH: process.env.PATH ?? '', ...env } as NodeJS.ProcessEnv);
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
  config = { chainId: devnet.chainId, token: devnet.token, treasury: treasury.address, fee: 10_000n, relayers: relayers.map((r) => r.address) };
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

    expect(await executorStatus(devnet.provider, config)).toEqual({ state: 'ready', executor: executor!.toLowerCase() });
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
