// `@facilitator/signers/testing`: stand-ins for key custody in tests. Never imported by production code
// (scripts/check-packages.ts).
export { startKmsProtocolServer, type KmsCall, type KmsKeyOptions, type KmsOperation, type KmsProtocolServer, type KmsTestKey } from './kms-protocol-server';
export { createSoftHsmToken, type SoftHsmToken, type SoftHsmTokenOptions } from './softhsm-token';
export { signerContract, type SignerUnderTest } from './signer-contract';
export { verifySigv4, type Sigv4Credentials, type Sigv4Refusal, type Sigv4Request } from './sigv4-verifier';
export { ed25519SignerContract, type Ed25519SignerUnderTest } from './ed25519-signer-contract';
