import type { AddressRules, ChainFamily, FamilyNetwork, FamilyNetworkReads, FamilyTransactionStatus } from '@facilitator/chain-family';
import { FailoverJsonRpcProvider } from './rpc/failover-provider';
import { RpcEndpointPool } from './rpc/rpc-endpoint-pool';
import { UsdcClient } from './usdc-client';

/** What the EVM family reads of a network's configuration to open it (a NetworkConfig is one). */
export interface EvmNetworkSettings {
  chainId: number;
  /** `eip155:<chainId>` */
  caip2: string;
  /** reads fail over in this order; transactions go to all of them */
  rpcUrls: readonly string[];
  rpcTimeoutMs: number;
  /** the token (USDC), lowercase */
  tokenAddress: string;
}

/**
 * An EVM network as its family opens it: the seam's reads, and what only EVM has, for the EVM-only layers
 * (the sender, the atomic path, the mechanisms' calls): the endpoints, the failover provider over them and
 * the token's client. One pool per network: one view of which endpoints are up, for reads and sends alike.
 */
export interface EvmFamilyNetwork extends FamilyNetwork {
  readonly family: 'evm';
  readonly chainId: number;
  readonly endpoints: RpcEndpointPool;
  readonly provider: FailoverJsonRpcProvider;
  readonly usdc: UsdcClient;
}

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * EVM addresses are stored lowercase. A mixed-case address is accepted whatever its EIP-55 checksum: the
 * checksum guards what a person types, and the API's schemas already judged what reached us; below them an
 * address is bytes.
 */
export const evmAddresses: AddressRules = {
  normalize: (raw) => (HEX_ADDRESS.test(raw) ? raw.toLowerCase() : undefined),
  same: (a, b) => a.toLowerCase() === b.toLowerCase(),
};

class EvmReads implements FamilyNetworkReads {
  constructor(
    private readonly provider: FailoverJsonRpcProvider,
    private readonly usdc: UsdcClient,
  ) {}

  tokenBalance(owner: string): Promise<bigint> {
    return this.usdc.balanceOf(owner);
  }

  feeAllowance(merchant: string, treasury: string): Promise<bigint> {
    return this.usdc.allowance(merchant, treasury);
  }

  nativeBalance(account: string): Promise<bigint> {
    return this.provider.getBalance(account);
  }

  async head(): Promise<bigint> {
    return BigInt(await this.usdc.head());
  }

  async transactionStatus(id: string): Promise<FamilyTransactionStatus> {
    const receipt = await this.provider.getTransactionReceipt(id);
    if (!receipt) return 'unknown';
    return receipt.status === 1 ? 'landed' : 'failed';
  }
}

/** The EVM family: `eip155` networks, secp256k1 keys, lowercase hex addresses. */
export const evmChainFamily: ChainFamily<EvmNetworkSettings, EvmFamilyNetwork> = {
  id: 'evm',
  caipNamespace: 'eip155',
  keyKind: 'secp256k1',
  addresses: evmAddresses,
  open(settings) {
    const endpoints = new RpcEndpointPool(settings.chainId, settings.rpcUrls, { callTimeoutMs: settings.rpcTimeoutMs });
    const provider = new FailoverJsonRpcProvider(endpoints);
    const usdc = new UsdcClient(provider, settings.tokenAddress);
    let closed = false;
    return {
      networkId: settings.caip2,
      family: 'evm',
      chainId: settings.chainId,
      token: settings.tokenAddress.toLowerCase(),
      endpoints,
      provider,
      usdc,
      reads: new EvmReads(provider, usdc),
      close() {
        if (closed) return;
        closed = true;
        // the provider's destroy takes its endpoint pool with it
        provider.destroy();
      },
    };
  },
};
