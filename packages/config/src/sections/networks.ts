import { NETWORKS, type GasCaps } from '@facilitator/core';
import { ConfigError } from '../config-error';
import type { EnvReader } from '../parsers';

/** A network the operator enabled (its RPC_URL_<chainId> is set), with the registry's defaults and the operator's overrides. */
export interface NetworkConfig {
  chainId: number;
  caip2: string;
  legacyName: string;
  /** the first of `rpcUrls` */
  rpcUrl: string;
  /** RPC_URL_<chainId>, comma-separated: reads fail over in this order, transactions go to all of them */
  rpcUrls: string[];
  /** a call an RPC endpoint has not answered within this fails over to the next (RPC_TIMEOUT_MS) */
  rpcTimeoutMs: number;
  /** lowercase; the only factories an ERC-6492 signature may deploy a payer wallet through (WALLET_FACTORIES_<chainId>) */
  walletFactories: string[];
  /** lowercase; the only wallet implementations (Safe singletons, Coinbase Smart Wallet) a factory may deploy for us (WALLET_IMPLEMENTATIONS_<chainId>) */
  walletImplementations: string[];
  /** lowercase */
  tokenAddress: string;
  /** When unset, read once from the token's name()/version() and cached. */
  eip712Name?: string;
  eip712Version?: string;
  confirmations: number;
  /** gas ceilings per transaction kind, checked before anything is sent (GAS_CAP_*_<chainId>) */
  gasCaps: GasCaps;
  /** the highest max fee per gas ever signed on this network (MAX_FEE_PER_GAS_GWEI_<chainId>), in wei */
  maxFeePerGas: bigint;
  /** an unmined transaction this old is replaced with higher fees (REPLACE_AFTER_MS_<chainId>) */
  replaceAfterMs: number;
  /** a relayer whose native balance is below this (wei) is skipped and reported dry (RELAYER_MIN_BALANCE_<chainId>) */
  relayerMinBalance: bigint;
  /** a settled transaction is watched for reorgs until its block is this deep (FINALITY_DEPTH_<chainId>) */
  finalityDepth: number;
  /** the most gas the items of one atomic settle transaction may be given together (BATCH_GAS_BUDGET_<chainId>) */
  batchGasBudget: bigint;
}

/**
 * Canonical Safe 1.4.1 SafeProxyFactory and Coinbase Smart Wallet factory (same address on every chain):
 * the ERC-6492 factories used unless WALLET_FACTORIES_<chainId> says otherwise (docs/decisions.md).
 */
const DEFAULT_WALLET_FACTORIES = ['0x4e1dcf7ad4e460cfd30791ccc4f9c8a4f820ec67', '0x0ba5ed0c6aa8c49038f819e587e2633c4a9f428a'] as const;
/**
 * Safe 1.4.1 `Safe` and `SafeL2` singletons and the Coinbase Smart Wallet v1 implementation, at their canonical
 * addresses: the wallets an ERC-6492 deployment may create unless WALLET_IMPLEMENTATIONS_<chainId> says otherwise.
 */
const DEFAULT_WALLET_IMPLEMENTATIONS = [
  '0x41675c099f32341bf84bfc5382af534df5c7461a',
  '0x29fcb43b46531bca003ddc8fcb67ffe91900c762',
  '0x000100abaad02f1cfc8bbe32bd5a564817339e72',
] as const;
/** Only the networks whose RPC URL is set; at least one must be. */
export function readNetworks(reader: EnvReader): NetworkConfig[] {
  const enabled: NetworkConfig[] = [];
  for (const network of NETWORKS) {
    const id = network.chainId;
    const rpcUrls = readRpcUrls(reader, `RPC_URL_${id}`);
    if (rpcUrls.length === 0) continue;
    enabled.push({
      chainId: id,
      caip2: network.caip2,
      legacyName: network.legacyName,
      rpcUrl: rpcUrls[0],
      rpcUrls,
      rpcTimeoutMs: reader.integer('RPC_TIMEOUT_MS', 3_000, 100, 60_000),
      walletFactories: readAddressList(reader, `WALLET_FACTORIES_${id}`, DEFAULT_WALLET_FACTORIES),
      walletImplementations: readAddressList(reader, `WALLET_IMPLEMENTATIONS_${id}`, DEFAULT_WALLET_IMPLEMENTATIONS),
      tokenAddress: reader.address(`TOKEN_ADDRESS_${id}`, network.usdc.address),
      eip712Name: reader.optionalString(`TOKEN_EIP712_NAME_${id}`),
      eip712Version: reader.optionalString(`TOKEN_EIP712_VERSION_${id}`),
      confirmations: reader.integer(`CONFIRMATIONS_${id}`, 1, 1, 100),
      gasCaps: {
        fee: reader.bigint(`GAS_CAP_FEE_${id}`, network.gasCaps.fee),
        transfer: reader.bigint(`GAS_CAP_TRANSFER_${id}`, network.gasCaps.transfer),
        contractTransfer: reader.bigint(`GAS_CAP_CONTRACT_TRANSFER_${id}`, network.gasCaps.contractTransfer),
        walletDeploy: reader.bigint(`GAS_CAP_WALLET_DEPLOY_${id}`, network.gasCaps.walletDeploy),
      },
      maxFeePerGas: BigInt(reader.integer(`MAX_FEE_PER_GAS_GWEI_${id}`, network.maxFeePerGasGwei, 1, 100_000)) * 1_000_000_000n,
      replaceAfterMs: reader.integer(`REPLACE_AFTER_MS_${id}`, 10_000, 1_000, 600_000),
      relayerMinBalance: reader.bigint(`RELAYER_MIN_BALANCE_${id}`, network.relayerMinBalance),
      finalityDepth: reader.integer(`FINALITY_DEPTH_${id}`, network.finalityDepth, 1, 10_000),
      batchGasBudget: reader.bigint(`BATCH_GAS_BUDGET_${id}`, network.batchGasBudget),
    });
  }
  if (enabled.length === 0) {
    throw new ConfigError(
      'RPC_URL_<chainId>',
      `must be set for at least one network (a network is enabled only when its RPC URL is set; chain ids: ${NETWORKS.map((n) => n.chainId).join(', ')})`,
    );
  }
  return enabled;
}

/** Every entry of a comma-separated URL list must be an http(s) URL; the error never quotes one (they carry keys). */
function readRpcUrls(reader: EnvReader, name: string): string[] {
  const urls = reader.list(name);
  urls.forEach((url, index) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) throw new ConfigError(name, `must be a http or https URL (entry ${index + 1})`);
  });
  if (new Set(urls).size !== urls.length) throw new ConfigError(name, 'lists the same URL twice');
  return urls;
}

/** A comma-separated list of addresses, lowercase; `fallback` when unset. */
function readAddressList(reader: EnvReader, name: string, fallback: readonly string[]): string[] {
  if (reader.raw(name) === undefined) return [...fallback];
  return reader.list(name).map((item, index) => {
    if (!/^0x[0-9a-fA-F]{40}$/.test(item)) throw new ConfigError(name, `entry ${index + 1} must be a 20-byte 0x-prefixed hex address`);
    return item.toLowerCase();
  });
}
