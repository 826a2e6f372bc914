import type { ChainFamilyId } from './chain-families';

/**
 * The network registry: the only table of the networks the facilitator can serve. A network is *enabled* only
 * when configuration gives it an RPC URL (`RPC_URL_<chainId>`); everything else here is a default that
 * `config` lets an operator override per network, and what the routes, `/x402/supported`, the CLI and the
 * devnet read. Adding a network is one entry (docs/architecture.md, "Adding a network").
 */
export interface NetworkInfo {
  /** its chain family, which its CAIP-2 namespace names (`familyOfNetworkId`) */
  family: ChainFamilyId;
  chainId: number;
  /** CAIP-2 id used by x402Version 2 (Form A). */
  caip2: string;
  label: string;
  /** Short name the spec's Form B uses and answers with. */
  legacyName: string;
  /** Every short name accepted on Form B input: the spec's and the one real x402 v1 clients send. */
  legacyAliases: readonly string[];
  /** The name x402 v1 (`@x402/evm`'s v1 network list) gives this chain; none: served on x402 v2 only. */
  x402V1Name?: string;
  /** Circle's native USDC: the default token, and its EIP-712 domain (what `name()` and `version()` return). */
  usdc: { address: string; eip712: { name: string; version: string } };
  /** a public RPC endpoint, for commands we show to merchants (never our own, which may carry a key) */
  publicRpcUrl: string;
  /** default FINALITY_DEPTH_<chainId>: a settled transaction is watched for reorgs until its block is this deep */
  finalityDepth: number;
  /** default GAS_CAP_*_<chainId> */
  gasCaps: GasCaps;
  /** default MAX_FEE_PER_GAS_GWEI_<chainId>: the highest max fee per gas ever signed here */
  maxFeePerGasGwei: number;
  /** default RELAYER_MIN_BALANCE_<chainId>, in the native token's wei: below it a relayer is reported dry */
  relayerMinBalance: bigint;
  /** default BATCH_GAS_BUDGET_<chainId>: the most gas the items of one atomic settle transaction may be given together */
  batchGasBudget: bigint;
}

/** Gas ceilings per transaction kind, checked before anything is sent. */
export interface GasCaps {
  /** the merchant's fee: transferFrom */
  fee: bigint;
  /** transferWithAuthorization from an ordinary key (EOA) payer */
  transfer: bigint;
  /** transferWithAuthorization from a contract-wallet payer (ERC-1271 signature check included) */
  contractTransfer: bigint;
  /** the factory call that deploys an ERC-6492 payer's wallet before its transfer */
  walletDeploy: bigint;
}


/**
 * Measured on the real USDC (FiatTokenV2_2): transferFrom ~40k, transferWithAuthorization ~80-96k from an
 * EOA; a Safe's ERC-1271 check adds ~15-30k. The caps leave room for storage-cold accounts and no more.
 */
const EVM_GAS_CAPS: GasCaps = { fee: 100_000n, transfer: 150_000n, contractTransfer: 300_000n, walletDeploy: 500_000n };
/**
 * Arbitrum's gas used includes the L1 data cost of the calldata, priced in L2 gas: it follows the ratio of L1
 * to L2 gas prices, so the same call takes several times the gas it does elsewhere (docs/decisions.md).
 */
const ARBITRUM_GAS_CAPS: GasCaps = { fee: 1_000_000n, transfer: 1_500_000n, contractTransfer: 3_000_000n, walletDeploy: 5_000_000n };
/** room for about 24 EOA payments (each item is given the fee and transfer caps); far under these chains' block gas limits */
const BATCH_GAS_BUDGET = 6_000_000n;
/** the same 24 payments at Arbitrum's caps; its blocks hold 32M gas */
const ARBITRUM_BATCH_GAS_BUDGET = 24_000_000n;
/** 0.001 of the native token: about a thousand transfers at an L2's usual fees */
const MILLI = 10n ** 15n;

const FIAT_TOKEN_V2 = '2';

/** What a network's entry takes from its family unless it says otherwise. */
type NetworkDefaults = Pick<NetworkInfo, 'family' | 'finalityDepth' | 'gasCaps' | 'maxFeePerGasGwei' | 'relayerMinBalance' | 'batchGasBudget'>;

/**
 * The OP Stack (Base, OP Mainnet) and their test networks: the sequencer's order is final unless it misbehaves;
 * 10 blocks (20 s) is deeper than any reorg of Base's sequencer seen so far (see docs/decisions.md).
 */
const OP_STACK: NetworkDefaults = {
  family: 'evm',
  finalityDepth: 10,
  gasCaps: EVM_GAS_CAPS,
  maxFeePerGasGwei: 100,
  relayerMinBalance: MILLI,
  batchGasBudget: BATCH_GAS_BUDGET,
};
/** Arbitrum One and Sepolia: sequencer order as on the OP Stack; gas as ARBITRUM_GAS_CAPS says */
const ARBITRUM: NetworkDefaults = { ...OP_STACK, gasCaps: ARBITRUM_GAS_CAPS, batchGasBudget: ARBITRUM_BATCH_GAS_BUDGET };
/**
 * Polygon PoS and Amoy: it has reorged dozens of blocks deep (157 in 2023); milestones now finalize in seconds,
 * but a settlement's block is watched well past the old depths. Its priority fee floor is 25-30 gwei and base
 * fees spike into the hundreds; POL is worth far less than ETH (one POL is a few hundred transfers).
 */
const POLYGON_POS: NetworkDefaults = { ...OP_STACK, finalityDepth: 64, maxFeePerGasGwei: 3_000, relayerMinBalance: 10n ** 18n };
/** Avalanche C-Chain and Fuji: an accepted Snowman block is final, there are no reorgs to watch for; 0.01 AVAX */
const AVALANCHE: NetworkDefaults = { ...OP_STACK, finalityDepth: 1, maxFeePerGasGwei: 1_000, relayerMinBalance: 10n ** 16n };

export const NETWORKS: readonly NetworkInfo[] = [
  {
    chainId: 8453,
    caip2: 'eip155:8453',
    label: 'Base',
    legacyName: 'layer2',
    legacyAliases: ['layer2', 'base'],
    x402V1Name: 'base',
    usdc: { address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', eip712: { name: 'USD Coin', version: FIAT_TOKEN_V2 } },
    publicRpcUrl: 'https://mainnet.base.org',
    ...OP_STACK,
  },
  {
    chainId: 84532,
    caip2: 'eip155:84532',
    label: 'Base Sepolia',
    legacyName: 'layer2-sepolia',
    legacyAliases: ['layer2-sepolia', 'base-sepolia'],
    x402V1Name: 'base-sepolia',
    usdc: { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', eip712: { name: 'USDC', version: FIAT_TOKEN_V2 } },
    publicRpcUrl: 'https://sepolia.base.org',
    ...OP_STACK,
  },
  {
    chainId: 137,
    caip2: 'eip155:137',
    label: 'Polygon PoS',
    legacyName: 'polygon',
    legacyAliases: ['polygon'],
    x402V1Name: 'polygon',
    usdc: { address: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', eip712: { name: 'USD Coin', version: FIAT_TOKEN_V2 } },
    publicRpcUrl: 'https://polygon-rpc.com',
    ...POLYGON_POS,
  },
  {
    chainId: 80002,
    caip2: 'eip155:80002',
    label: 'Polygon Amoy',
    legacyName: 'polygon-amoy',
    legacyAliases: ['polygon-amoy'],
    x402V1Name: 'polygon-amoy',
    usdc: { address: '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582', eip712: { name: 'USDC', version: FIAT_TOKEN_V2 } },
    publicRpcUrl: 'https://rpc-amoy.polygon.technology',
    ...POLYGON_POS,
  },
  {
    chainId: 42161,
    caip2: 'eip155:42161',
    label: 'Arbitrum One',
    legacyName: 'arbitrum',
    legacyAliases: ['arbitrum'],
    usdc: { address: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', eip712: { name: 'USD Coin', version: FIAT_TOKEN_V2 } },
    publicRpcUrl: 'https://arb1.arbitrum.io/rpc',
    ...ARBITRUM,
  },
  {
    chainId: 421614,
    caip2: 'eip155:421614',
    label: 'Arbitrum Sepolia',
    legacyName: 'arbitrum-sepolia',
    legacyAliases: ['arbitrum-sepolia'],
    usdc: { address: '0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d', eip712: { name: 'USD Coin', version: FIAT_TOKEN_V2 } },
    publicRpcUrl: 'https://sepolia-rollup.arbitrum.io/rpc',
    ...ARBITRUM,
  },
  {
    chainId: 43114,
    caip2: 'eip155:43114',
    label: 'Avalanche C-Chain',
    legacyName: 'avalanche',
    legacyAliases: ['avalanche'],
    x402V1Name: 'avalanche',
    usdc: { address: '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', eip712: { name: 'USD Coin', version: FIAT_TOKEN_V2 } },
    publicRpcUrl: 'https://api.avax.network/ext/bc/C/rpc',
    ...AVALANCHE,
  },
  {
    chainId: 43113,
    caip2: 'eip155:43113',
    label: 'Avalanche Fuji',
    legacyName: 'avalanche-fuji',
    legacyAliases: ['avalanche-fuji'],
    x402V1Name: 'avalanche-fuji',
    usdc: { address: '0x5425890298aed601595a70AB815c96711a31Bc65', eip712: { name: 'USD Coin', version: FIAT_TOKEN_V2 } },
    publicRpcUrl: 'https://api.avax-test.network/ext/bc/C/rpc',
    ...AVALANCHE,
  },
  {
    chainId: 10,
    caip2: 'eip155:10',
    label: 'OP Mainnet',
    legacyName: 'optimism',
    legacyAliases: ['optimism'],
    usdc: { address: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', eip712: { name: 'USD Coin', version: FIAT_TOKEN_V2 } },
    publicRpcUrl: 'https://mainnet.optimism.io',
    ...OP_STACK,
  },
  {
    chainId: 11155420,
    caip2: 'eip155:11155420',
    label: 'OP Sepolia',
    legacyName: 'optimism-sepolia',
    legacyAliases: ['optimism-sepolia'],
    usdc: { address: '0x5fd84259d66Cd46123540766Be93DFE6D43130D7', eip712: { name: 'USDC', version: FIAT_TOKEN_V2 } },
    publicRpcUrl: 'https://sepolia.optimism.io',
    ...OP_STACK,
  },
];

export function networkByChainId(chainId: number): NetworkInfo | undefined {
  return NETWORKS.find((n) => n.chainId === chainId);
}

export function networkByCaip2(caip2: string): NetworkInfo | undefined {
  return NETWORKS.find((n) => n.caip2 === caip2);
}

export function networkByLegacyName(name: string): NetworkInfo | undefined {
  return NETWORKS.find((n) => n.legacyAliases.includes(name));
}

export function networkByX402V1Name(name: string): NetworkInfo | undefined {
  return NETWORKS.find((n) => n.x402V1Name !== undefined && n.x402V1Name === name);
}

/** Accepts either naming, for places (such as the CLI) where both are natural. */
export function networkByAnyName(name: string): NetworkInfo | undefined {
  return networkByCaip2(name) ?? networkByLegacyName(name);
}
