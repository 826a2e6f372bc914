import { readFileSync, writeFileSync } from 'node:fs';
import { getAddress, hashAuthorization, Signature, Wallet, type Authorization } from 'ethers';
import { EnvReader, type Env } from '@facilitator/config';
import { delegationRequest, deployExecutor, executorConfigProblem, executorStatus, submitDelegation, type DelegationRequest } from '@facilitator/evm-executor';
import { connectChain, resolveChainSettings } from '../chain-context';
import { CliError, oneLine } from '../errors';
import { resolveExecutorSettings } from '../executor-settings';
import { table } from '../format';
import type { Output } from '../output';
import { stateRows } from './executor-status';

// The treasury's delegation without the treasury's key on a server: a server deploys the executor and prints
// what the treasury must sign; the key signs where it lives (offline); a relayer submits the signature.

export interface PrintAuthorizationFlags {
  network: string;
  rpcUrl?: string;
  /** an executor deployed by an earlier run (with this configuration): nothing is deployed again */
  executor?: string;
  out?: string;
}

/** `executor setup --print-authorization`: deploys the executor (paid by the first relayer) and prints the request. */
export async function printAuthorizationCommand(flags: PrintAuthorizationFlags, out: Output): Promise<number> {
  const settings = resolveChainSettings(flags);
  const { config, relayerKeys } = resolveExecutorSettings(settings);
  if (relayerKeys.length === 0) throw new CliError('--print-authorization deploys the executor from the first of RELAYER_PRIVATE_KEYS: set it (no treasury key is needed)');
  const chain = await connectChain(settings);
  try {
    const status = await executorStatus(chain.provider, config);
    if (status.state === 'ready') {
      out.line(`already set up: the treasury delegates to the settlement executor at ${getAddress(status.executor)}; nothing to sign`);
      return 0;
    }
    const sender = new Wallet(relayerKeys[0], chain.provider);
    let executor = flags.executor;
    if (executor !== undefined) {
      const problem = await executorConfigProblem(chain.provider, executor, config);
      if (problem) throw new CliError(`--executor: ${problem}`);
    } else {
      executor = await deployExecutor(config, sender, (p) => {
        if (p.step === 'deploying') out.line(`deploying   ${p.hash} (the executor with this configuration, paid by ${sender.address})`);
        if (p.step === 'deployed') out.line(`deployed    ${getAddress(p.executor)} (block ${p.receipt.blockNumber})`);
      });
    }
    const request = requestJson(await delegationRequest(chain.provider, config, executor));
    if (flags.out) writeFileSync(flags.out, request + '\n');
    out.line();
    out.line(`The treasury ${config.treasury} must sign this EIP-7702 authorization (it is good until the treasury sends any transaction):`);
    out.line(request);
    out.line();
    out.line(`Where the treasury's key is: facilitator executor sign-authorization --request ${flags.out ?? '<this JSON in a file>'} --out signed.json`);
    out.line(`Then here: facilitator executor submit-authorization --network ${settings.network.caip2} --authorization signed.json`);
    return 0;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`executor setup --print-authorization failed: ${oneLine(err)}`);
  } finally {
    chain.close();
  }
}

export interface SignAuthorizationFlags {
  request: string;
  out?: string;
  /** the executor the operator checked on its own (e.g. `executor status` from a trusted machine) */
  executor?: string;
  /** a read-only endpoint: the executor's code and configuration are checked against this machine's settings */
  rpcUrl?: string;
}

/**
 * `executor sign-authorization`: where TREASURY_PRIVATE_KEY is. The request comes from a server, which may be
 * compromised: its address is signed only once checked, either on chain (`--rpc-url`: the settlement
 * executor's code holding this machine's token, fee and relayers) or against the address the operator
 * checked independently (`--executor`). Chain id 0 (valid on every chain) is refused.
 */
export async function signAuthorizationCommand(flags: SignAuthorizationFlags, out: Output, env: Env = process.env): Promise<number> {
  const reader = new EnvReader(env);
  const raw = reader.raw('TREASURY_PRIVATE_KEY');
  if (raw === undefined) throw new CliError('sign-authorization signs with TREASURY_PRIVATE_KEY: run it where the treasury key is');
  const treasury = new Wallet(reader.privateKey('TREASURY_PRIVATE_KEY', raw).privateKey);
  const request = parseRequest(readJson(flags.request, '--request'));
  if (getAddress(request.treasury) !== treasury.address) throw new CliError(`the request is for the treasury ${request.treasury}; this key is ${treasury.address}`);
  if (request.chainId === 0) throw new CliError('the request is for chain id 0, which would be valid on every chain: refused');
  if (flags.rpcUrl === undefined && flags.executor === undefined) {
    throw new CliError(
      'sign-authorization needs --rpc-url <url> (the executor is checked on chain, read only) or --executor <address> (the executor you checked yourself): the request comes from a server, which could name another contract',
    );
  }
  if (flags.executor !== undefined && (!ADDRESS.test(flags.executor) || getAddress(flags.executor) !== request.address)) {
    throw new CliError(`the request names the executor ${request.address}, not --executor ${flags.executor}: not signed`);
  }
  if (flags.rpcUrl !== undefined) {
    const settings = resolveChainSettings({ network: `eip155:${request.chainId}`, rpcUrl: flags.rpcUrl }, env);
    const { config } = resolveExecutorSettings(settings, env);
    const chain = await connectChain(settings);
    try {
      const problem = await executorConfigProblem(chain.provider, request.address, config);
      if (problem) throw new CliError(`not signed: ${problem}`);
    } finally {
      chain.close();
    }
  }
  out.line(`signing for chain ${request.chainId}: the treasury ${treasury.address} delegates to the settlement executor at ${request.address}`);
  const signed = await treasury.authorize({ address: request.address, nonce: request.nonce, chainId: BigInt(request.chainId) });
  const json = authorizationJson(signed);
  if (flags.out) writeFileSync(flags.out, json + '\n');
  out.line(json);
  return 0;
}

export interface SubmitAuthorizationFlags {
  network: string;
  rpcUrl?: string;
  authorization: string;
}

/** `executor submit-authorization`: the first relayer sends the treasury's signed authorization (type 4). */
export async function submitAuthorizationCommand(flags: SubmitAuthorizationFlags, out: Output): Promise<number> {
  const settings = resolveChainSettings(flags);
  const { config, relayerKeys } = resolveExecutorSettings(settings);
  if (relayerKeys.length === 0) throw new CliError('submit-authorization sends from the first of RELAYER_PRIVATE_KEYS: set it');
  const authorization = parseAuthorization(readJson(flags.authorization, '--authorization'));
  const chain = await connectChain(settings);
  try {
    const sender = new Wallet(relayerKeys[0], chain.provider);
    const status = await submitDelegation(chain.provider, config, sender, authorization, (p) => {
      if (p.step === 'delegating') out.line(`delegating  ${p.hash} (the treasury's authorization to run ${getAddress(p.executor)})`);
      if (p.step === 'delegated') out.line(`delegated   confirmed in block ${p.receipt.blockNumber}`);
    });
    out.line();
    out.line(table(stateRows(status)));
    if (status.state !== 'ready') throw new CliError(`the executor is still not set up: ${status.why}`);
    return 0;
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`submit-authorization failed: ${oneLine(err)}`);
  } finally {
    chain.close();
  }
}

function requestJson(request: DelegationRequest): string {
  return JSON.stringify({ ...request, nonce: request.nonce.toString() });
}

function authorizationJson(a: Authorization): string {
  return JSON.stringify({ chainId: a.chainId.toString(), address: a.address, nonce: a.nonce.toString(), signature: { r: a.signature.r, s: a.signature.s, yParity: a.signature.yParity } });
}

function readJson(path: string, flag: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new CliError(`${flag} ${path} cannot be read`);
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new CliError(`${flag} ${path} is not a JSON object`);
}

function field(value: Record<string, unknown>, name: string, pattern: RegExp, what: string): string {
  const v = value[name];
  if ((typeof v !== 'string' && typeof v !== 'number') || !pattern.test(String(v))) throw new CliError(`"${name}" must be ${what}`);
  return String(v);
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const WHOLE = /^[0-9]{1,78}$/;
const WORD = /^0x[0-9a-fA-F]{64}$/;

/** The printed request, checked: its digest must be what the fields hash to (nothing edited on the way). */
function parseRequest(value: Record<string, unknown>): DelegationRequest {
  const request: DelegationRequest = {
    chainId: Number(field(value, 'chainId', WHOLE, 'a chain id')),
    address: getAddress(field(value, 'address', ADDRESS, 'the executor address')),
    nonce: BigInt(field(value, 'nonce', WHOLE, 'a whole number')),
    treasury: getAddress(field(value, 'treasury', ADDRESS, 'the treasury address')),
    digest: field(value, 'digest', WORD, 'a 32-byte hex digest').toLowerCase(),
  };
  const digest = hashAuthorization({ chainId: BigInt(request.chainId), address: request.address, nonce: request.nonce });
  if (digest !== request.digest) throw new CliError(`the request's digest is not that of its chainId, address and nonce (edited?): expected ${digest}`);
  return request;
}

function parseAuthorization(value: Record<string, unknown>): Authorization {
  const sig = value.signature;
  if (typeof sig !== 'object' || sig === null) throw new CliError('"signature" must be { r, s, yParity }');
  const s = sig as Record<string, unknown>;
  const yParity = field(s, 'yParity', /^[01]$/, '0 or 1');
  return {
    chainId: BigInt(field(value, 'chainId', WHOLE, 'a chain id')),
    address: getAddress(field(value, 'address', ADDRESS, 'the executor address')),
    nonce: BigInt(field(value, 'nonce', WHOLE, 'a whole number')),
    signature: Signature.from({ r: field(s, 'r', WORD, '32-byte hex'), s: field(s, 's', WORD, '32-byte hex'), yParity: Number(yParity) as 0 | 1 }),
  };
}
