import { formatUnits, getAddress, isAddress } from 'ethers';
import { CliError } from './errors';

/** `1000000` with 6 decimals → `1.00 USDC`: at least two decimals, never rounded. */
export function formatToken(units: bigint, decimals: number, symbol: string): string {
  const [whole, fraction = ''] = formatUnits(units, decimals).split('.');
  const trimmed = fraction.replace(/0+$/, '');
  return `${whole}.${trimmed.padEnd(2, '0')} ${symbol}`;
}

/** A signed change: `+0.99 USDC`, `-1.00 USDC`, `0.00 USDC`. */
export function formatDelta(units: bigint, decimals: number, symbol: string): string {
  if (units === 0n) return formatToken(0n, decimals, symbol);
  return (units > 0n ? '+' : '-') + formatToken(units < 0n ? -units : units, decimals, symbol);
}

/** RPC URLs often carry an API key in their path or query: show only the scheme, host and port. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const hidden = parsed.pathname.length > 1 || parsed.search !== '' || parsed.username !== '';
    return `${parsed.protocol}//${parsed.host}${hidden ? '/…' : ''}`;
  } catch {
    return '(invalid URL)';
  }
}

/** An EVM address from a flag or variable, checksummed; a one-line error naming where it came from. */
export function parseAddress(name: string, value: string): string {
  const text = value.trim();
  if (!/^0x[0-9a-fA-F]{40}$/.test(text)) throw new CliError(`${name} must be a 0x-prefixed 20-byte hex address (got ${JSON.stringify(text.slice(0, 60))})`);
  if (!isAddress(text)) throw new CliError(`${name} has a wrong checksum (mixed-case letters that do not match): check it, or write it in lowercase`);
  return getAddress(text);
}

/** A whole number from a flag, within bounds. */
export function parseWholeNumber(name: string, value: string, min: bigint, max: bigint): bigint {
  const text = value.trim();
  if (!/^[0-9]+$/.test(text)) throw new CliError(`${name} must be a whole number (got ${JSON.stringify(text.slice(0, 60))})`);
  const n = BigInt(text);
  if (n < min || n > max) throw new CliError(`${name} must be between ${min} and ${max} (got ${n})`);
  return n;
}

export const UINT256_MAX = 2n ** 256n - 1n;

/** Aligned `label  value` lines. */
export function table(rows: Array<[string, string]>, indent = ''): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${indent}${label.padEnd(width)}  ${value}`).join('\n');
}
