import type { OpenZeppelinRelayerClient } from './api/relayer-api-client';

/** One relayer of the OpenZeppelin Relayer server: its id there, the chain it sends on, its signer's address. */
export interface RelayerBinding {
  id: string;
  chainId: number;
  /** lowercase */
  address: string;
}

/** Which relayer sends for a (chain, address): `TransactionRequest.from` names an address, the API a relayer id. */
export class RelayerBindings {
  private readonly byKey = new Map<string, RelayerBinding>();

  constructor(bindings: readonly RelayerBinding[]) {
    if (bindings.length === 0) throw new Error('no OpenZeppelin relayer configured');
    for (const binding of bindings) {
      const normalized = { ...binding, address: binding.address.toLowerCase() };
      const key = keyOf(binding.chainId, normalized.address);
      if (this.byKey.has(key)) throw new Error(`two relayers send as ${normalized.address} on chain ${binding.chainId}`);
      this.byKey.set(key, normalized);
    }
  }

  find(chainId: number, address: string): RelayerBinding | undefined {
    return this.byKey.get(keyOf(chainId, address.toLowerCase()));
  }

  get(chainId: number, address: string): RelayerBinding {
    const binding = this.find(chainId, address);
    if (!binding) throw new Error(`no OpenZeppelin relayer sends as ${address} on chain ${chainId}`);
    return binding;
  }

  all(): RelayerBinding[] {
    return [...this.byKey.values()];
  }
}

/**
 * Reads each relayer's address from the relayer server and checks it can send: an EVM relayer, neither
 * paused nor disabled. For start-up, so a misconfigured relayer stops the worker with one line naming it.
 */
export async function resolveRelayerBindings(client: OpenZeppelinRelayerClient, relayers: ReadonlyArray<{ id: string; chainId: number }>): Promise<RelayerBinding[]> {
  return Promise.all(
    relayers.map(async ({ id, chainId }) => {
      const relayer = await client.getRelayer(id);
      if (relayer.network_type !== 'evm') throw new Error(`OpenZeppelin relayer ${id} is a ${relayer.network_type} relayer, not evm`);
      if (!relayer.address) throw new Error(`OpenZeppelin relayer ${id} reports no address`);
      if (relayer.paused || relayer.system_disabled) throw new Error(`OpenZeppelin relayer ${id} is ${relayer.paused ? 'paused' : 'disabled'}`);
      return { id, chainId, address: relayer.address.toLowerCase() };
    }),
  );
}

function keyOf(chainId: number, address: string): string {
  return `${chainId}:${address}`;
}
