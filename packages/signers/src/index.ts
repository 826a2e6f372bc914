// Key custody: the one place a key signs. A Signer holds one key (in this process, in AWS KMS, or in a
// PKCS#11 HSM) and signs digests; ethereum-signing builds transactions, typed data and EIP-7702
// authorizations on that; signer-spec reads the configuration that names the keys.
export type { Signer, SignerBackend } from './signer';
export { SignerError, SignerSpecError } from './signer-error';
export { recoverableSignature, isLowS, SECP256K1_N } from './recoverable-signature';
export { signAuthorization, signTransaction, signTypedData } from './ethereum-signing';
export { checkSigner, SIGNER_CHECK_DIGEST } from './check-signer';
export { LocalKeySigner, type LocalKeySignerOptions, type LocalSigningEngine } from './local-key-signer';
export { AwsKmsSigner, regionOfKmsArn, type AwsKmsSignerOptions } from './aws-kms-signer';
export { Pkcs11Signer } from './pkcs11/pkcs11-signer';
export { DEFAULT_PKCS11_SESSIONS, parsePkcs11Uri, Pkcs11UriError, type Pkcs11Uri } from './pkcs11/pkcs11-uri';
export { createSigner, createSigners, parseSignerList, parseSignerSpec, redactSpec, type SignerEnvironment, type SignerSpec } from './signer-spec';
export { publicKeyFromEcPoint, publicKeyFromSpki, rsFromDerSignature } from './der';
