import { Interface, type JsonRpcProvider } from 'ethers';
import { createProvider, fiatTokenInterface, UsdcClient, waitForRpc } from '@facilitator/evm-chain';
import { EnvReader, type Env } from '@facilitator/config';
import { NETWORKS, networkByAnyName, networkByChainId, type NetworkInfo } from '@facilitator/core';
import { DEV_STACK_CHAIN_VARIABLE } from './dev-stack-defaults';
import { CliError } from './errors';
import { parseAddress, redactUrl } from './format';

export const DEFAULT_NETWORK = 'eip155:84532';
const DEFAULT_FEE_AMOUNT = 10_000n;
const RPC_TIMEOUT_MS = 5_000;

/** The flags every chain command takes. */
export interface ChainFlags {
  network: string;
  rpcUrl?: string;
  treasury?: string;
}

/**
 * What a chain command needs, from the same variables as the service (`RPC_URL_<chainId>`,
 * `TOKEN_ADDRESS_<chainId>`, `CONFIRMATIONS_<chainId>`, `FEE_AMOUNT`), none of its secrets required.
 */
export interface ChainSettings {
  network: NetworkInfo;
  rpcUrl: string;
  /** where the RPC URL came from, for the user: `--rpc-url`, `RPC_URL_84532` or `public` */
  rpcSource: string;
  tokenAddress: string;
  feeAmount: bigint;
  confirmations: number;
}

export function resolveNetwork(name: string): NetworkInfo {
  const text = name.trim();
  const network = networkByAnyName(text) ?? (/^[0-9]+$/.test(text) ? networkByChainId(Number(text)) : undefined);
  if (!network) {
    const known = NETWORKS.flatMap((n) => [n.caip2, ...n.legacyAliases]).join(', ');
    throw new CliError(`unknown network ${JSON.stringify(text.slice(0, 60))} (known: ${known})`);
  }
  return network;
}

export function resolveChainSettings(flags: ChainFlags, env: Env = process.env): ChainSettings {
  const network = resolveNetwork(flags.network);
  const reader = new EnvReader(env);
  const id = network.chainId;
  const devChain = env[DEV_STACK_CHAIN_VARIABLE];
  // the dev stack's treasury and merchant belong to its own chain: never to another, nor to another RPC
  if (devChain !== undefined && (devChain !== String(id) || flags.rpcUrl !== undefined)) {
    throw new CliError(
      `the running dev stack's defaults are for its own chain (eip155:${devChain} at RPC_URL_${devChain}): set TREASURY_ADDRESS and MERCHANT_PRIVATE_KEY (or --keystore) for ${network.caip2}${flags.rpcUrl === undefined ? '' : ' at --rpc-url'}`,
    );
  }
  let rpcUrl: string;
  let rpcSource: string;
  if (flags.rpcUrl !== undefined) {
    rpcUrl = checkHttpUrl('--rpc-url', flags.rpcUrl);
    rpcSource = '--rpc-url';
  } else {
    const fromEnv = reader.optionalUrl(`RPC_URL_${id}`, ['http:', 'https:']);
    rpcUrl = fromEnv ?? network.publicRpcUrl;
    rpcSource = fromEnv ? `RPC_URL_${id}` : `public endpoint; set RPC_URL_${id} or --rpc-url to use another`;
  }
  const feeAmount = reader.bigint('FEE_AMOUNT', DEFAULT_FEE_AMOUNT);
  if (feeAmount === 0n) throw new CliError('FEE_AMOUNT must be greater than 0');
  return {
    network,
    rpcUrl,
    rpcSource,
    tokenAddress: parseAddress(`TOKEN_ADDRESS_${id}`, reader.address(`TOKEN_ADDRESS_${id}`, network.usdc.address)),
    feeAmount,
    confirmations: reader.integer(`CONFIRMATIONS_${id}`, 1, 1, 100),
  };
}

function checkHttpUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`${name} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`${name} must be an http or https URL`);
  return value;
}

/**
 * The treasury that spends merchants' allowances. Merchants do not have our key, so: `--treasury`, else
 * `TREASURY_ADDRESS`, else the address of `TREASURY_PRIVATE_KEY` when this runs beside the service.
 */
export function resolveTreasury(flag: string | undefined, env: Env = process.env): string {
  if (flag !== undefined) return parseAddress('--treasury', flag);
  const reader = new EnvReader(env);
  const address = reader.raw('TREASURY_ADDRESS');
  if (address !== undefined) return parseAddress('TREASURY_ADDRESS', address);
  const key = reader.raw('TREASURY_PRIVATE_KEY');
  if (key !== undefined) return parseAddress('TREASURY_PRIVATE_KEY', reader.privateKey('TREASURY_PRIVATE_KEY', key).address);
  throw new CliError(
    'the treasury address is not known: pass --treasury <address> or set TREASURY_ADDRESS ' +
      '(the facilitator publishes it; an insufficient_allowance error names it in details.treasury)',
  );
}

const symbolInterface = new Interface(['function symbol() view returns (string)']);

export interface TokenInfo {
  address: string;
  decimals: number;
  symbol: string;
}

/** A connected chain: provider, token reads, and the token's decimals and symbol. */
export interface ChainConnection {
  settings: ChainSettings;
  provider: JsonRpcProvider;
  token: TokenInfo;
  usdc: UsdcClient;
  close(): void;
}

/**
 * Connects with a plain `eth_chainId` first (an ethers provider pointed at a dead node retries forever),
 * checks the node serves the network asked for and that the token exists there.
 */
export async function connectChain(settings: ChainSettings): Promise<ChainConnection> {
  const shown = redactUrl(settings.rpcUrl);
  let chainId: number;
  try {
    chainId = await waitForRpc(settings.rpcUrl, RPC_TIMEOUT_MS);
  } catch (err) {
    const reason = (err as Error).message.split(settings.rpcUrl).join(shown).replace(/^RPC \S+ /, '');
    throw new CliError(`cannot reach the RPC at ${shown} (${settings.rpcSource}): ${reason}`);
  }
  const { network } = settings;
  if (chainId !== network.chainId) {
    throw new CliError(`the RPC at ${shown} serves chain ${chainId}, not ${network.caip2} (${network.label}): check --network and the RPC URL`);
  }
  const provider = createProvider(settings.rpcUrl, chainId);
  try {
    const code = await provider.getCode(settings.tokenAddress);
    if (code === '0x') {
      throw new CliError(`no contract at the token address ${settings.tokenAddress} on ${network.caip2}: set TOKEN_ADDRESS_${network.chainId}`);
    }
    const decimals = Number(await readCall(provider, settings.tokenAddress, fiatTokenInterface, 'decimals'));
    const symbol = await readCall<string>(provider, settings.tokenAddress, symbolInterface, 'symbol').catch(() => 'units');
    return {
      settings,
      provider,
      token: { address: settings.tokenAddress, decimals, symbol },
      usdc: new UsdcClient(provider, settings.tokenAddress),
      close: () => provider.destroy(),
    };
  } catch (err) {
    provider.destroy();
    throw err;
  }
}

async function readCall<T>(provider: JsonRpcProvider, to: string, iface: Interface, fn: string): Promise<T> {
  const data = await provider.call({ to, data: iface.encodeFunctionData(fn, []) });
  return iface.decodeFunctionResult(fn, data)[0] as T;
}

/** How many settlements an allowance and a balance pay the fee for; the smaller one is what counts. */
export function settlementsCovered(allowance: bigint, balance: bigint, fee: bigint) {
  const byAllowance = allowance / fee;
  const byBalance = balance / fee;
  return { byAllowance, byBalance, covered: byAllowance < byBalance ? byAllowance : byBalance };
}
