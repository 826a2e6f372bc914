import { parseUnits } from 'ethers';
import { FeePolicy } from './fee-policy';

const gwei = (amount: string) => parseUnits(amount, 'gwei');

describe('FeePolicy', () => {
  const policy = new FeePolicy(gwei('100'), 12.5);

  it('bumps both fees by at least the bump percentage, rounding up', () => {
    const previous = { maxFeePerGas: 1_000_000_001n, maxPriorityFeePerGas: 3n };
    expect(policy.bump(previous, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n })).toEqual({
      maxFeePerGas: 1_125_000_002n,
      maxPriorityFeePerGas: 4n,
    });
  });

  it('follows the market when it moved further than the bump', () => {
    const previous = { maxFeePerGas: gwei('2'), maxPriorityFeePerGas: gwei('1') };
    expect(policy.bump(previous, { maxFeePerGas: gwei('50'), maxPriorityFeePerGas: gwei('2') })).toEqual({
      maxFeePerGas: gwei('50'),
      maxPriorityFeePerGas: gwei('2'),
    });
  });

  it('never exceeds the cap, and gives up when the cap leaves no room for a valid bump', () => {
    const market = { maxFeePerGas: gwei('500'), maxPriorityFeePerGas: gwei('1') };
    expect(policy.capped(market)).toEqual({ maxFeePerGas: gwei('100'), maxPriorityFeePerGas: gwei('1') });
    expect(policy.bump({ maxFeePerGas: gwei('85'), maxPriorityFeePerGas: gwei('1') }, market)).toEqual({
      maxFeePerGas: gwei('100'),
      maxPriorityFeePerGas: gwei('1.125'),
    });
    expect(policy.bump({ maxFeePerGas: gwei('95'), maxPriorityFeePerGas: gwei('1') }, market)).toBeNull();
  });

  it('keeps the tip within the max fee', () => {
    expect(policy.capped({ maxFeePerGas: gwei('1'), maxPriorityFeePerGas: gwei('2') })).toEqual({
      maxFeePerGas: gwei('1'),
      maxPriorityFeePerGas: gwei('1'),
    });
  });

  it('prices new transactions from the reading, capped, and says when the base fee alone is above the cap', () => {
    expect(policy.market({ baseFeePerGas: gwei('10'), maxPriorityFeePerGas: gwei('1') })).toEqual({ maxFeePerGas: gwei('21'), maxPriorityFeePerGas: gwei('1') });
    expect(policy.market({ baseFeePerGas: gwei('60'), maxPriorityFeePerGas: gwei('1') })).toEqual({ maxFeePerGas: gwei('100'), maxPriorityFeePerGas: gwei('1') });
    expect(policy.isAboveCap({ baseFeePerGas: gwei('100'), maxPriorityFeePerGas: gwei('1') })).toBe(false);
    expect(policy.isAboveCap({ baseFeePerGas: gwei('100.000000001'), maxPriorityFeePerGas: 0n })).toBe(true);
  });
});
