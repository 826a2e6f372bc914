import { computeAddress, hexlify, type Signature } from 'ethers';
import { SECP256K1_EC_PARAMS, publicKeyFromEcPoint } from '../der';
import { recoverableSignature } from '../recoverable-signature';
import type { Signer } from '../signer';
import { SignerError, signerErrorOf } from '../signer-error';
import { pkcs11js } from './pkcs11-module';
import type { Pkcs11Uri } from './pkcs11-uri';
import { TokenKey, type TokenCurve } from './token-key';

/** secp256k1 keys: CKK_EC with the curve's OID; the identity is the EVM address of the public point. */
const SECP256K1: TokenCurve = {
  name: 'secp256k1',
  keyType: () => pkcs11js().CKK_EC,
  ecParams: [SECP256K1_EC_PARAMS],
  identityOf: (ecPoint) => computeAddress(hexlify(publicKeyFromEcPoint(ecPoint))),
};

/**
 * A secp256k1 key in a PKCS#11 token, named by an RFC 7512 URI (TokenKey: the key never leaves the token).
 * Its address comes from its public key's CKA_EC_POINT, and each signature is C_Sign with CKM_ECDSA over the
 * 32-byte digest (r‖s), made low-s with v found by recovery.
 */
export class Pkcs11Signer implements Signer {
  readonly backend = 'pkcs11' as const;

  private constructor(private readonly key: TokenKey) {}

  /** Opens the library (once per path), logs in and finds the key; a failure is a SignerError naming the key. */
  static async open(uri: string | Pkcs11Uri): Promise<Pkcs11Signer> {
    return new Pkcs11Signer(await TokenKey.open(uri, SECP256K1));
  }

  get address(): string {
    return this.key.identity;
  }

  get description(): string {
    return this.key.description;
  }

  /** Sessions signing in parallel (the URI's `x-sessions`). */
  get sessions(): number {
    return this.key.sessions;
  }

  async signDigest(digest: Uint8Array): Promise<Signature> {
    if (digest.length !== 32) throw new SignerError(this.description, `a digest is 32 bytes, not ${digest.length}`);
    const raw = await this.key.sign(pkcs11js().CKM_ECDSA, digest, 64);
    if (raw.length !== 64) throw new SignerError(this.description, `C_Sign returned ${raw.length} bytes, not r‖s (64)`);
    try {
      return recoverableSignature(digest, raw.subarray(0, 32), raw.subarray(32), this.address);
    } catch (error) {
      throw signerErrorOf(this.description, error);
    }
  }

  close(): Promise<void> {
    return this.key.close();
  }
}
