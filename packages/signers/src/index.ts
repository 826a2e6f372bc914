// Key custody: the one place a key signs. A Signer holds one secp256k1 key (in this process, in AWS KMS, or
// in a PKCS#11 HSM) and signs digests; ethereum-signing builds transactions, typed data and EIP-7702
// authorizations on that; signer-spec reads the configuration that names the keys. An Ed25519Signer holds
// one Ed25519 key (in this process or in a PKCS#11 HSM) and signs messages whole, as Solana does.
export type { Signer } from './signer';
export { SignerError } from './signer-error';
export { signTransaction } from './ethereum-signing';
export { checkSigner } from './check-signer';
export { LocalKeySigner } from './local-key-signer';
export { createSigner, createSigners, type SignerEnvironment } from './signer-spec';
// Ed25519 keys (Solana's fee payer and treasury): in this process or in a PKCS#11 HSM
export type { Ed25519Signer } from './ed25519/ed25519-signer';
export { LocalEd25519Signer } from './ed25519/local-ed25519-signer';
export { Pkcs11Ed25519Signer } from './pkcs11/pkcs11-ed25519-signer';
export { createEd25519Signer } from './ed25519/ed25519-signer-spec';
export { verifyEd25519 } from './ed25519/ed25519-public-key';
export { base58, fromBase58 } from './ed25519/base58';
