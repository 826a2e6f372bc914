/** The one method the hot path needs: a JSON-RPC call. JsonRpcBatchClient and RpcEndpointPool both have it. */
export interface RpcCaller {
  call<T>(method: string, params: unknown[]): Promise<T>;
  /** a call sent alone (not batched), with its own timeout; callers without it batch it like any other */
  callAlone?<T>(method: string, params: unknown[], timeoutMs?: number): Promise<T>;
  /** a call that runs a stranger's code: alone, and never held against an endpoint (see untrustedCall) */
  callUntrusted?<T>(method: string, params: unknown[], timeoutMs?: number): Promise<T>;
  destroy(): void;
}
