/** Amount parsing. Every amount is a bigint of the token's smallest unit; a float never touches money. */

const UINT256_MAX = (1n << 256n) - 1n;

/** USDC has 6 decimals on every supported network. */
export const TOKEN_DECIMALS = 6;

const ATOMIC = /^(0|[1-9][0-9]*)$/;
const DOLLARS = /^\$([0-9]+)(?:\.([0-9]+))?$/;

export class AmountFormatError extends Error {}

/** A decimal string of smallest units, such as "10000". */
export function parseAtomicAmount(text: string): bigint {
  if (!ATOMIC.test(text)) throw new AmountFormatError(`${JSON.stringify(text)} is not a whole number of smallest units`);
  const value = BigInt(text);
  if (value > UINT256_MAX) throw new AmountFormatError(`${text} does not fit in uint256`);
  return value;
}

/**
 * A spec `price`: "$" and a decimal number ("$0.01" is 10000 units of a 6-decimals token), or an atomic
 * amount. More fractional digits than the token has is an error: rounding someone's price is not ours to do.
 */
export function parsePrice(price: string, decimals: number): bigint {
  const dollars = DOLLARS.exec(price);
  if (!dollars) {
    if (ATOMIC.test(price)) return parseAtomicAmount(price);
    throw new AmountFormatError(`price ${JSON.stringify(price)} must be "$" followed by a decimal number, or a whole number of smallest units`);
  }
  const [, whole, fraction = ''] = dollars;
  if (fraction.length > decimals) {
    throw new AmountFormatError(`price ${price} has ${fraction.length} decimals; the token has ${decimals}`);
  }
  const value = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0');
  if (value > UINT256_MAX) throw new AmountFormatError(`price ${price} does not fit in uint256`);
  return value;
}
