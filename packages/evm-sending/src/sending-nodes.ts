import type { JsonRpcProvider } from 'ethers';
import { RpcUnavailableError } from './errors';
import { classifyNodeError } from '@facilitator/evm-chain';

/** The node of each network a provider sends on, by chain id (a Map, or a record such as `{ 84532: provider }`). */
export type SendingNetworks = ReadonlyMap<number, JsonRpcProvider> | Readonly<Record<number, JsonRpcProvider>>;

/**
 * Our node on each network a transaction provider sends on, and the one way to call it: every transport
 * failure becomes RpcUnavailableError. Shared by both providers (local keys, a relayer server), so that they
 * read the chain the same way.
 */
export class SendingNodes {
  private readonly networks: ReadonlyMap<number, JsonRpcProvider>;

  constructor(networks: SendingNetworks) {
    this.networks =
      networks instanceof Map ? networks : new Map(Object.entries(networks).map(([chainId, provider]) => [Number(chainId), provider as JsonRpcProvider]));
  }

  network(chainId: number): JsonRpcProvider {
    const provider = this.networks.get(chainId);
    if (!provider) throw new Error(`chain ${chainId} is not enabled for sending`);
    return provider;
  }

  /** Runs a read against the node, turning transport failures into RpcUnavailableError. */
  async rpc<T>(chainId: number, call: (provider: JsonRpcProvider) => Promise<T>): Promise<T> {
    try {
      return await call(this.network(chainId));
    } catch (error) {
      const classified = classifyNodeError(error);
      if (classified.category === 'rpc_unavailable') throw new RpcUnavailableError(chainId, classified.message, { cause: error });
      throw error;
    }
  }
}
