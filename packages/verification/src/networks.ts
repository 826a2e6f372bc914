import type { NetworkConfig } from '@facilitator/config';
import { networkByCaip2, networkByChainId, networkByLegacyName, networkByX402V1Name, UnsupportedNetworkError } from '@facilitator/core';

/** Resolves client-written network names to the enabled networks, in either naming. */
export class EnabledNetworks {
  constructor(readonly all: readonly NetworkConfig[]) {}

  byChainId(chainId: number): NetworkConfig | undefined {
    return this.all.find((n) => n.chainId === chainId);
  }

  /** Form A / x402 v2: CAIP-2 ids only. */
  fromCaip2(name: string): NetworkConfig {
    return this.enabled(name, networkByCaip2(name), (n) => [n.caip2]);
  }

  /** Form B / x402 v1: short names (the spec's, and those real v1 clients send). */
  fromLegacyName(name: string): NetworkConfig {
    return this.enabled(name, networkByLegacyName(name), (n) => networkByChainId(n.chainId)?.legacyAliases ?? []);
  }

  /** x402 v1 (`/x402/*`): the names of `@x402/evm`'s v1 network list; a network without one is served on v2 only. */
  fromX402V1Name(name: string): NetworkConfig {
    return this.enabled(name, networkByX402V1Name(name), (n) => networkByChainId(n.chainId)?.x402V1Name ?? []);
  }

  /** The registry network `name` named, if enabled; else unsupported, listing the enabled networks in that naming. */
  private enabled(name: string, known: { chainId: number } | undefined, namesOf: (n: NetworkConfig) => string | readonly string[]): NetworkConfig {
    const enabled = known && this.byChainId(known.chainId);
    if (!enabled) throw new UnsupportedNetworkError(name, this.all.flatMap(namesOf));
    return enabled;
  }
}
