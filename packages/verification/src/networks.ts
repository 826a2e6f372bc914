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
    const known = networkByCaip2(name);
    const enabled = known && this.byChainId(known.chainId);
    if (!enabled) throw new UnsupportedNetworkError(name, this.all.map((n) => n.caip2));
    return enabled;
  }

  /** Form B / x402 v1: short names (the spec's, and those real v1 clients send). */
  fromLegacyName(name: string): NetworkConfig {
    const known = networkByLegacyName(name);
    const enabled = known && this.byChainId(known.chainId);
    if (!enabled) throw new UnsupportedNetworkError(name, this.all.flatMap((n) => networkByChainId(n.chainId)?.legacyAliases ?? []));
    return enabled;
  }

  /** x402 v1 (`/x402/*`): the names of `@x402/evm`'s v1 network list; a network without one is served on v2 only. */
  fromX402V1Name(name: string): NetworkConfig {
    const known = networkByX402V1Name(name);
    const enabled = known && this.byChainId(known.chainId);
    if (!enabled) throw new UnsupportedNetworkError(name, this.x402V1Names());
    return enabled;
  }

  /** The x402 v1 names of the enabled networks that have one. */
  x402V1Names(): string[] {
    return this.all.flatMap((n) => networkByChainId(n.chainId)?.x402V1Name ?? []);
  }
}

