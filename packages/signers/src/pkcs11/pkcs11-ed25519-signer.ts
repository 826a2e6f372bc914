import { base58 } from '../ed25519/base58';
import type { Ed25519Signer } from '../ed25519/ed25519-signer';
import { verifyEd25519 } from '../ed25519/ed25519-public-key';
import { ED25519_EC_PARAMS, ED25519_EC_PARAMS_BY_NAME, ed25519PublicKeyFromEcPoint } from '../der';
import { SignerError } from '../signer-error';
import type { Pkcs11Uri } from './pkcs11-uri';
import { TokenKey, type TokenCurve } from './token-key';

/** PKCS#11 3.0 constants pkcs11js 2.1 does not name. */
const CKK_EC_EDWARDS = 0x40;
export const CKM_EDDSA = 0x1057;

/** Ed25519 keys: CKK_EC_EDWARDS with edwards25519 named by OID (RFC 8410) or by name; the identity is the base58 public key. */
export const ED25519_CURVE: TokenCurve = {
  name: 'Ed25519',
  keyType: () => CKK_EC_EDWARDS,
  ecParams: [ED25519_EC_PARAMS, ED25519_EC_PARAMS_BY_NAME],
  identityOf: (ecPoint) => base58(ed25519PublicKeyFromEcPoint(ecPoint)),
};

/**
 * An Ed25519 key in a PKCS#11 token (SoftHSM2 2.6 and HSMs that implement PKCS#11 3.0's EdDSA), named by an
 * RFC 7512 URI: the key never leaves the token, and each signature is C_Sign with CKM_EDDSA over the message
 * itself (Solana signs the message, no prehash), checked against the public key before it is handed on.
 */
export class Pkcs11Ed25519Signer implements Ed25519Signer {
  readonly backend = 'pkcs11' as const;
  readonly publicKey: Uint8Array;

  private constructor(
    private readonly key: TokenKey,
    publicKey: Uint8Array,
  ) {
    this.publicKey = publicKey;
  }

  static async open(uri: string | Pkcs11Uri): Promise<Pkcs11Ed25519Signer> {
    const key = await TokenKey.open(uri, ED25519_CURVE);
    // the public key from the point the token gave, as ED25519_CURVE read the address from it
    return new Pkcs11Ed25519Signer(key, Uint8Array.from(ed25519PublicKeyFromEcPoint(key.ecPoint)));
  }

  get address(): string {
    return this.key.identity;
  }

  get description(): string {
    return this.key.description;
  }

  async signMessage(message: Uint8Array): Promise<Uint8Array> {
    if (message.length === 0) throw new SignerError(this.description, 'an empty message is not signed (a Solana message never is)');
    const signature = Uint8Array.from(await this.key.sign(CKM_EDDSA, message, 64));
    if (!verifyEd25519(this.publicKey, message, signature)) throw new SignerError(this.description, `C_Sign returned ${signature.length} bytes that are not the key's Ed25519 signature`);
    return signature;
  }

  close(): Promise<void> {
    return this.key.close();
  }
}
