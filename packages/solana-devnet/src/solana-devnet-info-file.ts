import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { SolanaDevnetAccount } from './solana-accounts';

/** What the local Solana chain looks like to another process (the API, the worker, a manual session). */
export interface SolanaDevnetInfo {
  rpcUrl: string;
  /** x402 / CAIP-2 network id: `solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1` (devnet). */
  network: string;
  genesisHash: string;
  /** The pid of the process serving the chain (it runs in-process), to stop it from outside. */
  pid: number;
  slotTimeMs: number;
  blockhashMaxAgeSlots: number;
  token: { mint: string; symbol: string; decimals: number; tokenProgram: string };
  /** Base units the merchant approved the treasury to take in fees. */
  feeAllowance: string;
  accounts: {
    payer: SolanaDevnetAccount & { tokenAccount: string };
    merchant: SolanaDevnetAccount & { tokenAccount: string };
    /** The merchant's token account's delegate: collects fees with a delegated TransferChecked. */
    treasury: SolanaDevnetAccount;
    /** Pays the fees of (and co-signs) settlement transactions: x402's `extra.feePayer`. */
    feePayer: SolanaDevnetAccount;
    /** The local USDC mint authority (on the real devnet it is Circle's). */
    mintAuthority: SolanaDevnetAccount;
  };
}

/** Written to a temporary name then renamed, so a reader polling for the file never sees half of it. */
export function writeSolanaDevnetInfo(path: string, info: SolanaDevnetInfo): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
  renameSync(temporary, path);
}

export function readSolanaDevnetInfo(path: string): SolanaDevnetInfo {
  return JSON.parse(readFileSync(path, 'utf8')) as SolanaDevnetInfo;
}
