import type { Fees } from '@facilitator/db';
import { cappedFees, marketFees, type MarketReading } from '@facilitator/evm-chain';

// the fee fields are stored with each signed version, so their type lives with the transaction repository
export type { Fees, MarketReading };

const BASIS_POINTS = 10_000n;

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

  /** Twice the latest base fee plus the node's suggested tip: stays includable through several full blocks. */
  market(reading: MarketReading): Fees {
    return this.capped(marketFees(reading));
  }

  /** Whether a transaction signed under the cap can be included at this base fee at all. */
  isAboveCap(reading: MarketReading): boolean {
    return reading.baseFeePerGas > this.maxFeePerGasCap;
  }

  capped(fees: Fees): Fees {
    return cappedFees(fees, this.maxFeePerGasCap);
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
