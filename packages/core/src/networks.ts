/**
 * The networks the facilitator can serve. A network is *enabled* only when configuration gives it an
 * RPC URL; this table only knows what each network is called in the different protocol versions.
 */
export interface NetworkInfo {
  chainId: number;
  /** CAIP-2 id used by x402Version 2 (Form A). */
  caip2: string;
  /** Short name the spec's Form B uses and answers with. */
  legacyName: string;
  /** Every short name accepted on input: the spec's and the one real x402 v1 clients send. */
  legacyAliases: readonly string[];
  /** Circle's USDC on this network, the default token. */
  defaultTokenAddress: string;
  label: string;
  /** a public RPC endpoint, for commands we show to merchants (never our own, which may carry a key) */
  publicRpcUrl: string;
}

export const NETWORKS: readonly NetworkInfo[] = [
  {
    chainId: 8453,
    caip2: 'eip155:8453',
    legacyName: 'layer2',
    legacyAliases: ['layer2', 'base'],
    defaultTokenAddress: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
    label: 'Base',
    publicRpcUrl: 'https://mainnet.base.org',
  },
  {
    chainId: 84532,
    caip2: 'eip155:84532',
    legacyName: 'layer2-sepolia',
    legacyAliases: ['layer2-sepolia', 'base-sepolia'],
    defaultTokenAddress: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    label: 'Base Sepolia',
    publicRpcUrl: 'https://sepolia.base.org',
  },
];

export const SUPPORTED_CHAIN_IDS = NETWORKS.map((n) => n.chainId);

export function networkByChainId(chainId: number): NetworkInfo | undefined {
  return NETWORKS.find((n) => n.chainId === chainId);
}

export function networkByCaip2(caip2: string): NetworkInfo | undefined {
  return NETWORKS.find((n) => n.caip2 === caip2);
}

export function networkByLegacyName(name: string): NetworkInfo | undefined {
  return NETWORKS.find((n) => n.legacyAliases.includes(name));
}

/** Accepts either naming, for places (such as the CLI) where both are natural. */
export function networkByAnyName(name: string): NetworkInfo | undefined {
  return networkByCaip2(name) ?? networkByLegacyName(name);
}
