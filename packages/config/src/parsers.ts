import { Wallet } from 'ethers';
import { ConfigError } from './config-error';

/**
 * Small typed readers for environment variables. Each one names the variable in its error, so a bad
 * deployment fails at start-up with one line that says what to fix. Secrets are never echoed.
 */
export type Env = Record<string, string | undefined>;

export class EnvReader {
  constructor(private readonly env: Env) {}

  /** The raw value, with empty strings treated as unset (as most deployment tools write them). */
  raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback?: string): string {
    const value = this.raw(name) ?? fallback;
    if (value === undefined) throw new ConfigError(name, 'is required but not set');
    return value;
  }

  optionalString(name: string): string | undefined {
    return this.raw(name);
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name) ?? fallback;
    if (!allowed.includes(value as T)) throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${value}")`);
    return value as T;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const text = this.raw(name);
    if (text === undefined) return fallback;
    if (!/^-?[0-9]+$/.test(text)) throw new ConfigError(name, `must be a whole number (got "${text}")`);
    const value = Number(text);
    if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max} (got ${value})`);
    return value;
  }

  bigint(name: string, fallback: bigint): bigint {
    const text = this.raw(name);
    if (text === undefined) return fallback;
    if (!/^[0-9]+$/.test(text)) throw new ConfigError(name, `must be a whole number of smallest token units (got "${text}")`);
    return BigInt(text);
  }

  boolean(name: string, fallback: boolean): boolean {
    const text = this.raw(name);
    if (text === undefined) return fallback;
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
    throw new ConfigError(name, `must be true or false (got "${text}")`);
  }

  url(name: string, protocols: readonly string[], fallback?: string): string {
    const text = this.string(name, fallback);
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      throw new ConfigError(name, 'is not a valid URL');
    }
    if (!protocols.includes(parsed.protocol)) {
      throw new ConfigError(name, `must be a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL`);
    }
    return text;
  }

  optionalUrl(name: string, protocols: readonly string[]): string | undefined {
    return this.raw(name) === undefined ? undefined : this.url(name, protocols);
  }

  list(name: string): string[] {
    const text = this.raw(name);
    if (text === undefined) return [];
    return text
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  }

  address(name: string, fallback: string): string {
    const value = this.raw(name) ?? fallback;
    if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw new ConfigError(name, 'must be a 20-byte 0x-prefixed hex address');
    return value.toLowerCase();
  }

  /** A secp256k1 private key; returns it normalized with the address it controls. */
  privateKey(name: string, value: string | undefined): { privateKey: string; address: string } {
    if (value === undefined) throw new ConfigError(name, 'is required but not set');
    const hex = value.startsWith('0x') ? value : `0x${value}`;
    if (!/^0x[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError(name, 'must be a 32-byte hex private key');
    try {
      return { privateKey: hex.toLowerCase(), address: new Wallet(hex).address.toLowerCase() };
    } catch {
      throw new ConfigError(name, 'is not a valid secp256k1 private key');
    }
  }

  milliseconds(name: string, fallback: number): number {
    return this.integer(name, fallback, 0, 24 * 60 * 60 * 1000);
  }

  millisecondsList(name: string, fallback: readonly number[], length: number): number[] {
    const items = this.list(name);
    if (items.length === 0) return [...fallback];
    if (items.length !== length || items.some((item) => !/^[0-9]+$/.test(item))) {
      throw new ConfigError(name, `must be ${length} comma-separated whole numbers of milliseconds`);
    }
    return items.map(Number);
  }
}

/** A day in milliseconds: the unit of the retention settings. */
export const DAY_MS = 24 * 60 * 60 * 1000;
