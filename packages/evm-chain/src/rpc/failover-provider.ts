import { JsonRpcProvider, type JsonRpcApiProviderOptions, type JsonRpcError as EthersJsonRpcError, type JsonRpcPayload, type JsonRpcResult } from 'ethers';
import { JsonRpcError } from '../json-rpc-batch-client';
import { plainNetwork } from '../rpc-provider';
import type { RpcEndpointPool } from './rpc-endpoint-pool';
import { UntrustedCallTimeoutError } from './untrusted-call';

/**
 * Methods whose work can be a stranger's code: an estimate runs the whole transaction, and ours run a payer
 * wallet's ERC-1271 check or an ERC-6492 factory. They go through the pool's `callUntrusted` (alone on the
 * wire, no health verdict). The hot path's eth_calls that run strangers' code use it directly.
 */
const UNTRUSTED_METHODS = new Set(['eth_estimateGas']);

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
    const network = plainNetwork(pool.chainId);
    // see createProvider: no network detection, no 250 ms answer cache, no ethers network plugins
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
          : UNTRUSTED_METHODS.has(payload.method)
            ? await this.pool.callUntrusted(payload.method, params)
            : await this.pool.call(payload.method, params);
      return { id: payload.id, result };
    } catch (error) {
      // the answer to this request only, as geth words its own call timeout ("execution aborted (timeout =
      // 5s)", classified rpc_unavailable: retry later): the other requests of ethers' batch are unaffected
      if (error instanceof UntrustedCallTimeoutError) {
        const answer: EthersJsonRpcError = { id: payload.id, error: { code: -32000, message: `execution aborted (timeout = ${error.timeoutMs} ms): ${error.message}` } };
        return answer as unknown as JsonRpcResult;
      }
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
