import { RpcCallTimeoutError, RpcHttpStatusError } from '../json-rpc-batch-client';
import type { RpcCaller } from './rpc-caller';

/**
 * A call that runs a stranger's code (a payer wallet's ERC-1271 check, an ERC-6492 factory, the estimate
 * of a transfer from a contract wallet) did not finish within its timeout. It says nothing about the
 * endpoint, which stays healthy: the caller answers for that one payment (refused as unverifiable), never
 * "RPC unavailable" for everyone.
 */
export class UntrustedCallTimeoutError extends Error {
  /** classified as a timeout (rpc_unavailable, retry later) by classifyNodeError where it reaches one */
  readonly code = 'TIMEOUT';

  constructor(
    readonly method: string,
    readonly timeoutMs: number,
  ) {
    super(`the payer's code did not finish within ${timeoutMs} ms (${method}); the RPC endpoint was not blamed`);
    this.name = 'UntrustedCallTimeoutError';
  }
}

/** Whether a transport failure of a call is its slowness (our timeout, or a gateway's 504/408), not a dead endpoint. */
export function isSlowAnswer(error: unknown): boolean {
  if (error instanceof RpcCallTimeoutError) return true;
  return error instanceof RpcHttpStatusError && (error.status === 504 || error.status === 408);
}

/**
 * Runs a call of a stranger's code: ALONE on the wire (a batch is answered as a whole, so a slow call in it
 * would hold up, and time out, every call batched with it) and without touching any endpoint's health.
 * Uses the caller's `callUntrusted` (the endpoint pool's), else its `callAlone`; a slow answer becomes
 * UntrustedCallTimeoutError. JSON-RPC errors (the node's answer: a revert, out of gas) are thrown as they are.
 */
export async function untrustedCall<T>(rpc: RpcCaller, method: string, params: unknown[], timeoutMs?: number): Promise<T> {
  if (rpc.callUntrusted) return rpc.callUntrusted<T>(method, params, timeoutMs);
  if (!rpc.callAlone) return rpc.call<T>(method, params);
  try {
    return await (timeoutMs === undefined ? rpc.callAlone<T>(method, params) : rpc.callAlone<T>(method, params, timeoutMs));
  } catch (error) {
    if (isSlowAnswer(error)) throw new UntrustedCallTimeoutError(method, timeoutMs ?? (error as RpcCallTimeoutError).timeoutMs ?? 0);
    throw error;
  }
}
