import type { Signature } from 'ethers';

/** Where a signer's key lives. */
type SignerBackend = 'local' | 'aws-kms' | 'pkcs11';

/**
 * One key that signs 32-byte digests; everything Ethereum signs (transactions, EIP-712 typed data, EIP-7702
 * authorizations) is built on `signDigest` in ethereum-signing.ts, so the sending engine never knows where
 * the key is.
 */
export interface Signer {
  /** The key's address, checksummed (EIP-55). */
  readonly address: string;
  readonly backend: SignerBackend;
  /** Names the key without any secret: `local:0xAb…`, `kms:arn:aws:kms:…`, `pkcs11:token=…;object=…`. */
  readonly description: string;
  /**
   * The signature of a 32-byte digest, low-s and with v 27 or 28, recovering to `address`. Rejects with a
   * SignerError naming this signer when the key cannot sign.
   */
  signDigest(digest: Uint8Array): Promise<Signature>;
  /** Releases sessions and connections; the signer signs nothing afterwards. */
  close(): Promise<void>;
}
