/**
 * One Ed25519 key that signs messages (Solana's transactions: the fee payer's and the treasury's signatures).
 * Solana signs the message bytes themselves, no prehash, so unlike the secp256k1 `Signer` this port takes
 * the message whole. Where the key lives is the backend's business: in this process, or in a PKCS#11 HSM.
 */
export interface Ed25519Signer {
  /** the public key, base58 (a Solana address) */
  readonly address: string;
  /** the 32-byte public key */
  readonly publicKey: Uint8Array;
  readonly backend: 'local' | 'pkcs11';
  /** names the key without any secret: `local:<address>`, `pkcs11:token=…;object=…` */
  readonly description: string;
  /** the 64-byte Ed25519 signature of `message`; rejects with a SignerError naming this signer when the key cannot sign */
  signMessage(message: Uint8Array): Promise<Uint8Array>;
  /** releases sessions; the signer signs nothing afterwards */
  close(): Promise<void>;
}
