import { JsonRpcProvider, Network, type JsonRpcApiProviderOptions, type JsonRpcError as EthersJsonRpcError, type JsonRpcPayload, type JsonRpcResult } from 'ethers';
import { JsonRpcError } from '../json-rpc-batch-client';
import type { RpcEndpointPool } from './rpc-endpoint-pool';

/** Never contacted: every request goes through the pool. */
const UNUSED_URL = 'http://rpc-endpoint-pool.invalid';

/**
 * An ethers provider over a network's RpcEndpointPool, so everything written against ethers (the
 * transaction provider, UsdcClient, the merchants' allowance reads) fails over between endpoints, and
 * `eth_sendRawTransaction` reaches every healthy endpoint. Node errors come back to ethers as the JSON-RPC
 * errors they were, so ethers and classifyNodeError see exactly what a single node would have said.
 */
export class FailoverJsonRpcProvider extends JsonRpcProvider {
  constructor(
    readonly pool: RpcEndpointPool,
    options: JsonRpcApiProviderOptions = {},
  ) {
    const network = Network.from(pool.chainId);
    // see createProvider: no network detection, no 250 ms answer cache
    super(UNUSED_URL, network, { staticNetwork: network, cacheTimeout: -1, ...options });
  }

  // ethers declares results only, but reads `error` entries as the node's errors (getRpcError)
  override async _send(payload: JsonRpcPayload | JsonRpcPayload[]): Promise<JsonRpcResult[]> {
    const payloads = Array.isArray(payload) ? payload : [payload];
    // all issued in one tick: each endpoint's batch client sends them as one batch again
    return Promise.all(payloads.map((p) => this.answer(p)));
  }

  private async answer(payload: JsonRpcPayload): Promise<JsonRpcResult> {
    const params = (payload.params ?? []) as unknown[];
    try {
      const result =
        payload.method === 'eth_sendRawTransaction'
          ? await this.pool.broadcast(params[0] as string)
          : await this.pool.call(payload.method, params);
      return { id: payload.id, result };
    } catch (error) {
      if (error instanceof JsonRpcError) {
        const answer: EthersJsonRpcError = { id: payload.id, error: { code: error.code, message: error.message, data: error.data } };
        return answer as unknown as JsonRpcResult;
      }
      throw error;
    }
  }

  override destroy(): void {
    super.destroy();
    this.pool.destroy();
  }
}
