import { Pkcs11Ed25519Signer } from '../pkcs11/pkcs11-ed25519-signer';
import { Pkcs11UriError, parsePkcs11Uri } from '../pkcs11/pkcs11-uri';
import { redactSpec } from '../signer-spec';
import { SignerError, signerErrorOf } from '../signer-error';
import type { Ed25519Signer } from './ed25519-signer';
import { LocalEd25519Signer } from './local-ed25519-signer';

/**
 * An Ed25519 signer (a Solana fee payer's or treasury's key) from its spec: `pkcs11:<RFC 7512 URI>` for a key
 * in an HSM, or `local:<secret key>` (64 bytes in base58 or a JSON array, as `solana-keygen` writes them, or
 * a 32-byte hex seed). KMS holds no Ed25519 key we can use here, so `kms:` is refused. Errors are SignerErrors
 * naming the entry without its secret.
 */
export async function createEd25519Signer(spec: string): Promise<Ed25519Signer> {
  const text = spec.trim();
  const scheme = /^([a-z0-9-]+):/i.exec(text)?.[1]?.toLowerCase();
  const shown = redactSpec(text);
  if (scheme === 'local') return new LocalEd25519Signer(text.slice('local:'.length));
  if (scheme === 'pkcs11') {
    let uri;
    try {
      uri = parsePkcs11Uri(text);
    } catch (error) {
      throw new SignerError(shown, error instanceof Pkcs11UriError ? error.message : String(error));
    }
    try {
      return await Pkcs11Ed25519Signer.open(uri);
    } catch (error) {
      throw signerErrorOf(uri.description, error);
    }
  }
  if (scheme === 'kms') throw new SignerError(shown, 'an Ed25519 key is local:<secret key> or pkcs11:<URI> (KMS signers hold secp256k1 keys)');
  throw new SignerError(shown, 'not an Ed25519 signer: use local:<secret key> or pkcs11:<URI>');
}
