import { parsePrice, parseAtomicAmount, AmountFormatError } from './amounts';

describe('parsePrice', () => {
  it.each([
    ['$0', 0n],
    ['$1', 1_000_000n],
    ['$0.1', 100_000n],
    ['$0.01', 10_000n],
    ['$0.001', 1_000n],
    ['$0.0001', 100n],
    ['$0.00001', 10n],
    ['$0.000001', 1n],
    ['$12.345678', 12_345_678n],
    ['10000', 10_000n],
  ])('%s is %s units', (price, units) => {
    expect(parsePrice(price, 6)).toBe(units);
  });

  it.each(['$0.0000001', '$1.', '$.5', '0.01', '$-1', '$1e3', '', '$', ' $1', '01'])('rejects %j', (price) => {
    expect(() => parsePrice(price, 6)).toThrow(AmountFormatError);
  });

  it('names the decimals problem rather than rounding', () => {
    expect(() => parsePrice('$0.0000001', 6)).toThrow('has 7 decimals; the token has 6');
  });
});

describe('parseAtomicAmount', () => {
  it('rejects values beyond uint256', () => {
    expect(() => parseAtomicAmount((1n << 256n).toString())).toThrow('does not fit in uint256');
    expect(parseAtomicAmount(((1n << 256n) - 1n).toString())).toBe((1n << 256n) - 1n);
  });
});
