import type { JsonRpcProvider } from 'ethers';
import type { Fees } from '@facilitator/db';

// the fee fields are stored with each signed version, so their type lives with the transaction repository
export type { Fees };

const BASIS_POINTS = 10_000n;

/** What the node says of the market now. */
export interface MarketReading {
  baseFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * EIP-1559 fees for new transactions and for replacements. A replacement must raise both fees by the
 * node's minimum bump (10% on geth and its forks) or it is refused as underpriced; we bump by at least
 * `bumpPercent`, or to the market when the market moved further. Nothing ever exceeds `maxFeePerGasCap`.
 */
export class FeePolicy {
  private readonly bumpBasisPoints: bigint;

  constructor(
    readonly maxFeePerGasCap: bigint,
    readonly bumpPercent: number,
  ) {
    this.bumpBasisPoints = BigInt(Math.round(bumpPercent * 100));
  }

  /** The latest block's base fee and the node's suggested tip, as the node reports them (uncapped). */
  static async read(provider: JsonRpcProvider): Promise<MarketReading> {
    // raw answers: ethers' Block object formats every field (and hash) of the block, for one number
    const [block, tip] = await Promise.all([
      provider.send('eth_getBlockByNumber', ['latest', false]) as Promise<{ baseFeePerGas?: string } | null>,
      provider.send('eth_maxPriorityFeePerGas', []) as Promise<string>,
    ]);
    return { baseFeePerGas: block?.baseFeePerGas ? BigInt(block.baseFeePerGas) : 0n, maxPriorityFeePerGas: BigInt(tip) };
  }

  /** Twice the latest base fee plus the node's suggested tip: stays includable through several full blocks. */
  market(reading: MarketReading): Fees {
    return this.capped({ maxFeePerGas: reading.baseFeePerGas * 2n + reading.maxPriorityFeePerGas, maxPriorityFeePerGas: reading.maxPriorityFeePerGas });
  }

  /** Whether a transaction signed under the cap can be included at this base fee at all. */
  isAboveCap(reading: MarketReading): boolean {
    return reading.baseFeePerGas > this.maxFeePerGasCap;
  }

  capped(fees: Fees): Fees {
    const maxFeePerGas = fees.maxFeePerGas < this.maxFeePerGasCap ? fees.maxFeePerGas : this.maxFeePerGasCap;
    const maxPriorityFeePerGas = fees.maxPriorityFeePerGas < maxFeePerGas ? fees.maxPriorityFeePerGas : maxFeePerGas;
    return { maxFeePerGas, maxPriorityFeePerGas };
  }

  /** The fees of a replacement for `previous`, or null when the cap leaves no room for a bump the node accepts. */
  bump(previous: Fees, market: Fees): Fees | null {
    const minimum = { maxFeePerGas: this.raise(previous.maxFeePerGas), maxPriorityFeePerGas: this.raise(previous.maxPriorityFeePerGas) };
    const bumped = this.capped({
      maxFeePerGas: max(minimum.maxFeePerGas, market.maxFeePerGas),
      maxPriorityFeePerGas: max(minimum.maxPriorityFeePerGas, market.maxPriorityFeePerGas),
    });
    if (bumped.maxFeePerGas < minimum.maxFeePerGas || bumped.maxPriorityFeePerGas < minimum.maxPriorityFeePerGas) return null;
    return bumped;
  }

  private raise(value: bigint): bigint {
    // rounded up: a bump rounded down can fall short of the node's minimum by one wei
    return (value * (BASIS_POINTS + this.bumpBasisPoints) + BASIS_POINTS - 1n) / BASIS_POINTS;
  }
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
