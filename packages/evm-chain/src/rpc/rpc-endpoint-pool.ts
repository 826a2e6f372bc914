import { JsonRpcBatchClient, JsonRpcError } from '../json-rpc-batch-client';
import type { RpcEndpointSnapshot } from '@facilitator/core';
import { EndpointHealth, type HealthPolicy } from './endpoint-health';
import type { RpcCaller } from './rpc-caller';
import { isSlowAnswer, UntrustedCallTimeoutError } from './untrusted-call';

export type { RpcCaller };

/**
 * No endpoint of the network gave a usable answer. Its message names the chain and the count only:
 * the endpoints' URLs (and their errors, which quote them) can carry provider keys.
 */
export class RpcEndpointsUnavailableError extends Error {
  /** classified as rpc_unavailable (retry later) by classifyNodeError */
  readonly code = 'NETWORK_ERROR';

  constructor(
    readonly chainId: number,
    tried: number,
  ) {
    super(`no RPC endpoint of chain ${chainId} answered (${tried} tried)`);
    this.name = 'RpcEndpointsUnavailableError';
  }
}

interface RpcEndpointPoolOptions extends Partial<HealthPolicy> {
  /** a call an endpoint has not answered within this is failed over to the next one; default 3 s */
  callTimeoutMs?: number;
}

interface Endpoint {
  name: string;
  client: RpcCaller;
  health: EndpointHealth;
}

/**
 * The RPC endpoints of one network (RPC_URL_<chainId>, comma-separated), used as one.
 * - Reads go to the first healthy endpoint in configured order and fail over on a transport failure
 *   (refused, per-call timeout, HTTP 429/5xx); a JSON-RPC error is the node's answer and is returned as is.
 * - A failed endpoint is down at once and skipped; it is probed again later, off the callers' path,
 *   so a dead first endpoint costs the hot path one failed call, not one per request.
 * - Signed transactions go to every healthy endpoint at once (`broadcast`).
 */
export class RpcEndpointPool implements RpcCaller {
  private readonly endpoints: Endpoint[];
  private readonly timeoutMs: number;

  constructor(
    readonly chainId: number,
    urls: readonly string[],
    options: RpcEndpointPoolOptions = {},
    makeClient: (url: string, timeoutMs: number) => RpcCaller = (url, timeoutMs) => new JsonRpcBatchClient(url, timeoutMs),
  ) {
    if (urls.length === 0) throw new Error(`chain ${chainId} has no RPC endpoint`);
    const policy: HealthPolicy = { retryAfterMs: options.retryAfterMs ?? 1_000, maxRetryAfterMs: options.maxRetryAfterMs ?? 30_000 };
    const timeoutMs = options.callTimeoutMs ?? 3_000;
    this.timeoutMs = timeoutMs;
    this.endpoints = urls.map((url, i) => ({ name: String(i + 1), client: makeClient(url, timeoutMs), health: new EndpointHealth(policy) }));
  }

  async call<T>(method: string, params: unknown[]): Promise<T> {
    this.probeDue();
    const order = this.order();
    for (const endpoint of order) {
      const started = Date.now();
      try {
        const result = await endpoint.client.call<T>(method, params);
        endpoint.health.succeeded(Date.now() - started);
        return result;
      } catch (error) {
        if (error instanceof JsonRpcError) {
          endpoint.health.succeeded(Date.now() - started);
          throw error;
        }
        endpoint.health.broke();
      }
    }
    throw new RpcEndpointsUnavailableError(this.chainId, order.length);
  }

  /**
   * A call that runs a stranger's code (an ERC-1271 check, an ERC-6492 deployment, the estimate of a transfer
   * from a contract wallet), whose time and failure are the stranger's doing, not the endpoint's:
   * - sent alone, never in a batch: a node answers a batch as a whole, so one slow hostile call would hold
   *   up (and time out) every call batched with it;
   * - never counted for or against an endpoint's health (the pool's own calls and probes judge that);
   * - a slow answer (timeout, gateway 504) is not failed over: the next endpoint would run the same code
   *   for as long. It rejects with UntrustedCallTimeoutError, which the caller answers for that payment only.
   * A refused connection or an HTTP error is failed over to the next endpoint, as a batched call would be.
   */
  async callUntrusted<T>(method: string, params: unknown[], timeoutMs = this.timeoutMs): Promise<T> {
    this.probeDue();
    const order = this.order();
    for (const endpoint of order) {
      try {
        return await (endpoint.client.callAlone ? endpoint.client.callAlone<T>(method, params, timeoutMs) : endpoint.client.call<T>(method, params));
      } catch (error) {
        if (error instanceof JsonRpcError) throw error;
        if (isSlowAnswer(error)) throw new UntrustedCallTimeoutError(method, timeoutMs);
      }
    }
    throw new RpcEndpointsUnavailableError(this.chainId, order.length);
  }

  /**
   * Hands a signed transaction to every healthy endpoint (every endpoint when none is). Resolves with the
   * first acceptance; otherwise rejects with the node answer of the most preferred endpoint that answered
   * ("already known", "nonce too low", ... for the caller's classification), or unavailable.
   */
  broadcast(rawTransaction: string): Promise<string> {
    this.probeDue();
    const up = this.endpoints.filter((e) => e.health.up);
    const targets = up.length > 0 ? up : this.order();
    return new Promise<string>((resolve, reject) => {
      const answers: Array<JsonRpcError | undefined> = new Array(targets.length);
      let pending = targets.length;
      let accepted = false;
      const finish = () => {
        if (--pending > 0 || accepted) return;
        const answer = answers.find((a) => a !== undefined);
        reject(answer ?? new RpcEndpointsUnavailableError(this.chainId, targets.length));
      };
      targets.forEach((endpoint, i) => {
        const started = Date.now();
        endpoint.client.call<string>('eth_sendRawTransaction', [rawTransaction]).then(
          (hash) => {
            endpoint.health.succeeded(Date.now() - started);
            if (!accepted) {
              accepted = true;
              resolve(hash);
            }
            finish();
          },
          (error: unknown) => {
            if (error instanceof JsonRpcError) {
              endpoint.health.succeeded(Date.now() - started);
              answers[i] = error;
            } else {
              endpoint.health.broke();
            }
            finish();
          },
        );
      });
    });
  }

  /**
   * `eth_sendRawTransactionSync` (EIP-7966) to the most preferred healthy endpoint, sent alone since it
   * answers only once the transaction is mined, and the plain `eth_sendRawTransaction` to the other
   * healthy endpoints (as `broadcast` does). Resolves with the receipt; rejects with the node's answer
   * (JsonRpcError: a refusal, or "method not found" where the node lacks it) or a transport failure. Only
   * a transport failure before the timeout (refused, reset) counts against the endpoint: a slow answer is
   * the chain's pace, not the endpoint's health.
   */
  async sendSync(rawTransaction: string, timeoutMs: number): Promise<unknown> {
    this.probeDue();
    const [first, ...others] = this.order();
    for (const endpoint of others.filter((e) => e.health.up)) {
      endpoint.client.call('eth_sendRawTransaction', [rawTransaction]).catch(() => undefined);
    }
    const params = [rawTransaction];
    const started = Date.now();
    try {
      return await (first.client.callAlone ? first.client.callAlone('eth_sendRawTransactionSync', params, timeoutMs) : first.client.call('eth_sendRawTransactionSync', params));
    } catch (error) {
      if (!(error instanceof JsonRpcError) && Date.now() - started < timeoutMs) first.health.broke();
      throw error;
    }
  }

  /**
   * Asks every endpoint for the head block now (for /readyz) and records what it learns. The answer names
   * endpoints by position only.
   */
  async checkAll(timeoutMs = 1_500): Promise<RpcEndpointSnapshot[]> {
    await Promise.all(
      this.endpoints.map(async (endpoint) => {
        const started = Date.now();
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer in time')), timeoutMs);
        });
        try {
          await Promise.race([endpoint.client.call('eth_blockNumber', []), late]);
          endpoint.health.succeeded(Date.now() - started);
        } catch (error) {
          if (error instanceof JsonRpcError) endpoint.health.succeeded(Date.now() - started);
          else endpoint.health.broke();
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return this.snapshot();
  }

  snapshot(): RpcEndpointSnapshot[] {
    return this.endpoints.map((e) => ({
      chainId: this.chainId,
      endpoint: e.name,
      up: e.health.up,
      answered: e.health.answered,
      failed: e.health.failed,
      latencyMs: e.health.latencyMs,
    }));
  }

  get size(): number {
    return this.endpoints.length;
  }

  destroy(): void {
    for (const endpoint of this.endpoints) endpoint.client.destroy();
  }

  /** Healthy endpoints in configured order, then the down ones, the soonest due for a retry first. */
  private order(): Endpoint[] {
    const up = this.endpoints.filter((e) => e.health.up);
    const down = this.endpoints.filter((e) => !e.health.up).sort((a, b) => a.health.nextTryAt - b.health.nextTryAt);
    return [...up, ...down];
  }

  /** Starts a probe of each down endpoint whose back-off has passed; nobody waits for it. */
  private probeDue(): void {
    for (const endpoint of this.endpoints) {
      if (!endpoint.health.claimProbe()) continue;
      const started = Date.now();
      endpoint.client
        .call('eth_blockNumber', [])
        .then(
          () => endpoint.health.succeeded(Date.now() - started),
          (error: unknown) => (error instanceof JsonRpcError ? endpoint.health.succeeded(Date.now() - started) : endpoint.health.broke()),
        )
        .finally(() => endpoint.health.probeDone());
    }
  }
}
