/**
 * The chain families the engine knows, each with its CAIP-2 namespace: a network id (`eip155:8453`) names its
 * family by its namespace. A family is a seam below the mechanisms: `@facilitator/chain-family` says what one
 * provides. EVM is served; Solana's family (`svm`, issue 43) is known here so its records and payment keys
 * are spelt by its own rules, and is served once its networks are registered.
 */
export const CHAIN_FAMILIES = {
  evm: { caipNamespace: 'eip155' },
  svm: { caipNamespace: 'solana' },
} as const;

export type ChainFamilyId = keyof typeof CHAIN_FAMILIES;

/** The family of a CAIP-2 network id, read from its namespace; undefined for a namespace no family has. */
export function familyOfNetworkId(networkId: string): ChainFamilyId | undefined {
  const namespace = /^([-a-z0-9]{3,8}):[-_a-zA-Z0-9]{1,32}$/.exec(networkId)?.[1];
  return (Object.keys(CHAIN_FAMILIES) as ChainFamilyId[]).find((family) => CHAIN_FAMILIES[family].caipNamespace === namespace);
}

/** The CAIP-2 id of the EVM network with this chain id (`eip155:8453`): what an EVM row's `network` holds. */
export function evmNetworkId(chainId: number): string {
  return `${CHAIN_FAMILIES.evm.caipNamespace}:${chainId}`;
}
