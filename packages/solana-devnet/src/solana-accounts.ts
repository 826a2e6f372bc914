import { createHash } from 'node:crypto';
import { createKeyPairSignerFromPrivateKeyBytes, getAddressEncoder, getBase58Decoder, type KeyPairSigner } from '@solana/kit';

/** A devnet key as other processes read it from the info file. */
export interface SolanaDevnetAccount {
  address: string;
  /** The 64-byte secret key (32-byte seed, then the public key) in base58, as wallets import it. */
  secretKey: string;
  /** The same 64 bytes as a `solana-keygen` keypair file holds them. */
  secretKeyBytes: number[];
}

export const SOLANA_DEVNET_ROLES = ['payer', 'merchant', 'treasury', 'feePayer', 'mintAuthority'] as const;
export type SolanaDevnetRole = (typeof SOLANA_DEVNET_ROLES)[number];

/** The 32-byte Ed25519 seed of a role: from a fixed label, so every run has the same keys (like the EVM devnet's). */
export function solanaDevnetSeed(role: SolanaDevnetRole): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`x402-facilitator solana devnet ${role}`).digest());
}

export async function solanaDevnetSigner(role: SolanaDevnetRole): Promise<KeyPairSigner> {
  return createKeyPairSignerFromPrivateKeyBytes(solanaDevnetSeed(role), true);
}

export function describeAccount(role: SolanaDevnetRole, signer: KeyPairSigner): SolanaDevnetAccount {
  const secret = new Uint8Array(64);
  secret.set(solanaDevnetSeed(role), 0);
  secret.set(getAddressEncoder().encode(signer.address), 32);
  return { address: signer.address, secretKey: getBase58Decoder().decode(secret), secretKeyBytes: [...secret] };
}
