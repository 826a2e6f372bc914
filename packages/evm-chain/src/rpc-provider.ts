import { JsonRpcProvider, Network, type JsonRpcApiProviderOptions } from 'ethers';
import { setTimeout as sleep } from 'node:timers/promises';

const POLL_INTERVAL_MS = 25;
const ATTEMPT_TIMEOUT_MS = 1_000;

/**
 * Waits until a JSON-RPC node answers `eth_chainId` and returns the chain id. Plain fetch on purpose:
 * an ethers provider created before the node listens retries network detection forever and keeps the
 * process alive.
 */
export async function waitForRpc(url: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      return await fetchChainId(url);
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      throw new Error(`RPC ${url} did not answer eth_chainId within ${timeoutMs} ms: ${describe(lastError)}`);
    }
    await sleep(POLL_INTERVAL_MS);
  }
}

async function fetchChainId(url: string): Promise<number> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const body = (await response.json()) as { result?: string; error?: { message?: string } };
  if (typeof body.result !== 'string') throw new Error(body.error?.message ?? 'no result in eth_chainId answer');
  return Number(BigInt(body.result));
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

/**
 * An ethers provider for a node whose chain id is already known.
 * - `staticNetwork`: never calls `eth_chainId` again, so a node that goes away makes calls fail instead
 *   of leaving a detection loop retrying forever.
 * - `cacheTimeout: -1`: ethers otherwise answers identical calls made within 250 ms from a cache, so
 *   back-to-back `eth_getTransactionCount` calls return a stale nonce ("nonce has already been used").
 * - a plain network (`plainNetwork`), never ethers' named one.
 */
export function createProvider(
  url: string,
  chainId: number,
  options: JsonRpcApiProviderOptions = {},
): JsonRpcProvider {
  const network = plainNetwork(chainId);
  return new JsonRpcProvider(url, network, { staticNetwork: network, cacheTimeout: -1, ...options });
}

/**
 * The chain by id alone. ethers' named networks carry plugins: Polygon's (137, 80002) fetches fee data from
 * Polygon's gas station over the internet, so fees would come from a third party instead of the node and the
 * fee policy, and fail where that site is unreachable.
 */
export function plainNetwork(chainId: number): Network {
  return new Network(`eip155:${chainId}`, chainId);
}

