import type { JsonRpcProvider } from 'ethers';

/** EIP-1559 fee fields of a transaction (the same shape the transaction repository stores). */
export interface Eip1559Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** What the node says of the market now. */
export interface MarketReading {
  baseFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** The latest block's base fee and the node's suggested tip, as the node reports them (uncapped). */
export async function readMarket(provider: JsonRpcProvider): Promise<MarketReading> {
  // raw answers: ethers' Block object formats every field (and hash) of the block, for one number
  const [block, tip] = await Promise.all([
    provider.send('eth_getBlockByNumber', ['latest', false]) as Promise<{ baseFeePerGas?: string } | null>,
    provider.send('eth_maxPriorityFeePerGas', []) as Promise<string>,
  ]);
  return { baseFeePerGas: block?.baseFeePerGas ? BigInt(block.baseFeePerGas) : 0n, maxPriorityFeePerGas: BigInt(tip) };
}

/**
 * Twice the latest base fee plus the node's suggested tip: stays includable through several full blocks.
 * Read and simulated with here, sent with by the sending engine's fee policy (which caps it).
 */
export function marketFees(reading: MarketReading): Eip1559Fees {
  return { maxFeePerGas: reading.baseFeePerGas * 2n + reading.maxPriorityFeePerGas, maxPriorityFeePerGas: reading.maxPriorityFeePerGas };
}

/** `fees` with neither field above `maxFeePerGasCap` (and the tip never above the fee). */
export function cappedFees(fees: Eip1559Fees, maxFeePerGasCap: bigint): Eip1559Fees {
  const maxFeePerGas = fees.maxFeePerGas < maxFeePerGasCap ? fees.maxFeePerGas : maxFeePerGasCap;
  const maxPriorityFeePerGas = fees.maxPriorityFeePerGas < maxFeePerGas ? fees.maxPriorityFeePerGas : maxFeePerGas;
  return { maxFeePerGas, maxPriorityFeePerGas };
}
