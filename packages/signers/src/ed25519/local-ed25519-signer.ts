import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { SignerError } from '../signer-error';
import { base58, fromBase58 } from './base58';
import type { Ed25519Signer } from './ed25519-signer';
import { verifyEd25519 } from './ed25519-public-key';

/** PKCS#8 DER for an Ed25519 private key, up to its 32-byte seed (RFC 8410). */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * An Ed25519 key held in this process's memory, given as Solana writes a keypair: 64 bytes (seed, then
 * public key) in base58 or as a JSON array (`solana-keygen`'s file), or the 32-byte seed alone. A 64-byte
 * key whose public half is not its seed's is refused: it would sign for an address nobody tracks. The key
 * is a node:crypto KeyObject in a JavaScript-private field: not shown by inspection or logs.
 */
export class LocalEd25519Signer implements Ed25519Signer {
  readonly backend = 'local' as const;
  readonly address: string;
  readonly publicKey: Uint8Array;
  readonly description: string;
  readonly #key: KeyObject;
  #closed = false;

  constructor(secret: string | Uint8Array) {
    const bytes = secretBytes(secret);
    const seed = bytes.subarray(0, 32);
    this.#key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    const jwk = createPublicKey(this.#key).export({ format: 'jwk' });
    this.publicKey = Uint8Array.from(Buffer.from(jwk.x!, 'base64url'));
    this.address = base58(this.publicKey);
    this.description = `local:${this.address}`;
    if (bytes.length === 64 && base58(bytes.subarray(32)) !== this.address) {
      throw new SignerError(`local:${base58(bytes.subarray(32))}`, `its secret key derives ${this.address}`);
    }
  }

  async signMessage(message: Uint8Array): Promise<Uint8Array> {
    if (this.#closed) throw new SignerError(this.description, 'closed');
    // as the HSM signer: PKCS#11 modules refuse empty data, and a Solana message is never empty
    if (message.length === 0) throw new SignerError(this.description, 'an empty message is not signed (a Solana message never is)');
    const signature = Uint8Array.from(sign(null, message, this.#key));
    // a signature that does not verify is never handed on (a faulty key or library)
    if (!verifyEd25519(this.publicKey, message, signature)) throw new SignerError(this.description, 'the signature does not verify');
    return signature;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}

function secretBytes(secret: string | Uint8Array): Uint8Array {
  if (secret instanceof Uint8Array) return checkedLength(secret);
  const text = secret.trim();
  try {
    if (text.startsWith('[')) return checkedLength(Uint8Array.from(JSON.parse(text) as number[]));
    if (/^(0x)?[0-9a-fA-F]{64}$/.test(text)) return Uint8Array.from(Buffer.from(text.replace(/^0x/, ''), 'hex'));
    return fromBase58(text, 64);
  } catch (error) {
    if (error instanceof SignerError) throw error;
    // the secret is never quoted
    throw new SignerError('local', 'an Ed25519 secret key is 64 bytes in base58 or a JSON array, or a 32-byte hex seed');
  }
}

function checkedLength(bytes: Uint8Array): Uint8Array {
  if (bytes.length !== 64 && bytes.length !== 32) throw new SignerError('local', `an Ed25519 secret key is 64 bytes (or a 32-byte seed), not ${bytes.length}`);
  return bytes;
}
