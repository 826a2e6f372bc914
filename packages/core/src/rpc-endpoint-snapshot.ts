/** What the rest of the system may know about one RPC endpoint: never its URL, which can carry a provider key. */
export interface RpcEndpointSnapshot {
  chainId: number;
  /** "1", "2", ... in the order of RPC_URL_<chainId>: the only name an endpoint has outside this package */
  endpoint: string;
  up: boolean;
  /** calls answered by the node (a JSON-RPC error is an answer) */
  answered: number;
  /** calls that got no usable answer: refused, timed out, HTTP 429/5xx, garbage */
  failed: number;
  /** moving average of answered calls' latency, in ms */
  latencyMs: number;
}
