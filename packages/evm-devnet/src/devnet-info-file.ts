import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { DevnetAccounts } from './test-accounts';

/** What a devnet looks like to another process (the API, the worker, a manual curl session). */
export interface DevnetInfo {
  rpcUrl: string;
  chainId: number;
  /** Anvil's pid, to stop it from outside. */
  pid: number;
  token: {
    address: string;
    symbol: string;
    decimals: number;
    /** The token's EIP-712 domain name and version. */
    eip712: { name: string; version: string };
  };
  accounts: DevnetAccounts;
}

/** Written to a temporary name then renamed, so a reader polling for the file never sees half of it. */
export function writeDevnetInfo(path: string, info: DevnetInfo): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
  renameSync(temporary, path);
}

export function readDevnetInfo(path: string): DevnetInfo {
  return JSON.parse(readFileSync(path, 'utf8')) as DevnetInfo;
}
