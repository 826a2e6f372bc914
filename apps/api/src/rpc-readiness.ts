import type { RpcEndpointPool } from '@facilitator/evm-chain';
import type { ReadinessParts } from './routes/health';

/**
 * A network is ready while one of its endpoints answers; the answer lists each endpoint by position
 * ("1", "2", ...) as ok or down. Never a URL or an error's text: both can carry the provider's key.
 */
export async function rpcReadiness(pool: RpcEndpointPool): Promise<ReadinessParts> {
  const endpoints = await pool.checkAll();
  if (!endpoints.some((e) => e.up)) throw new Error('no RPC endpoint answers');
  return Object.fromEntries(endpoints.map((e) => [e.endpoint, e.up ? 'ok' : 'down']));
}
