import type { NetworkConfig } from '@facilitator/config';
import { networkByCaip2, networkByChainId, networkByLegacyName, UnsupportedNetworkError } from '@facilitator/core';

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
}

