// Key custody: the one place a key signs. A Signer holds one key (in this process, in AWS KMS, or in a
// PKCS#11 HSM) and signs digests; ethereum-signing builds transactions, typed data and EIP-7702
// authorizations on that; signer-spec reads the configuration that names the keys.
export type { Signer } from './signer';
export { SignerError } from './signer-error';
export { signTransaction } from './ethereum-signing';
export { checkSigner } from './check-signer';
export { LocalKeySigner } from './local-key-signer';
export { createSigner, createSigners, type SignerEnvironment } from './signer-spec';
