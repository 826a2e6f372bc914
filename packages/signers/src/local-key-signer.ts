import { Signature, SigningKey, computeAddress, getAddress, getBytes, isHexString, type BytesLike } from 'ethers';
import { nativeSecp256k1 } from './secp256k1-native';
import type { Signer } from './signer';
import { SignerError } from './signer-error';

/** Which code computes a local key's signatures; both are RFC 6979 deterministic and low-s (same bytes). */
type LocalSigningEngine = 'libsecp256k1' | 'ethers';

interface LocalKeySignerOptions {
  /** The address the key must derive (a mismatched pair would sign from an address nobody tracks). */
  expectedAddress?: string;
  /** Force ethers' pure-JavaScript signing (tests compare it with libsecp256k1); default: native when it loads. */
  engine?: LocalSigningEngine;
}

/**
 * A private key held in this process's memory (today's `RELAYER_PRIVATE_KEYS`). Signs synchronously in
 * libsecp256k1 (tens of microseconds; the worker signs thousands of transactions), through ethers when the
 * native module is missing. The key is kept in a private field: not enumerable, not shown by inspection.
 */
export class LocalKeySigner implements Signer {
  readonly backend = 'local' as const;
  readonly address: string;
  readonly description: string;
  readonly engine: LocalSigningEngine;
  readonly #secret: Uint8Array;
  readonly #ethersKey: SigningKey;
  #closed = false;

  constructor(privateKey: BytesLike, options: LocalKeySignerOptions = {}) {
    if (!(privateKey instanceof Uint8Array) && !isHexString(privateKey, 32)) {
      throw new SignerError('local', 'a local private key is 32 bytes of hex (0x followed by 64 hex digits)');
    }
    this.#secret = getBytes(privateKey);
    this.#ethersKey = new SigningKey(this.#secret);
    this.address = computeAddress(this.#ethersKey.publicKey);
    this.description = `local:${this.address}`;
    if (options.expectedAddress !== undefined && getAddress(options.expectedAddress) !== this.address) {
      throw new SignerError(`local:${getAddress(options.expectedAddress)}`, `its private key derives ${this.address}`);
    }
    this.engine = options.engine ?? (nativeSecp256k1 ? 'libsecp256k1' : 'ethers');
    if (this.engine === 'libsecp256k1' && !nativeSecp256k1) throw new SignerError(this.description, "libsecp256k1's native module does not load here");
  }

  signDigest(digest: Uint8Array): Promise<Signature> {
    try {
      return Promise.resolve(this.signDigestSync(digest));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The same signature as `signDigest`, without a promise: for callers that sign in a tight loop. */
  signDigestSync(digest: Uint8Array): Signature {
    if (this.#closed) throw new SignerError(this.description, 'closed');
    if (digest.length !== 32) throw new SignerError(this.description, `a digest is 32 bytes, not ${digest.length}`);
    if (this.engine === 'ethers' || !nativeSecp256k1) return this.#ethersKey.sign(digest);
    const { signature, recid } = nativeSecp256k1.ecdsaSign(digest, this.#secret);
    const hex = Buffer.from(signature).toString('hex');
    return Signature.from({ r: '0x' + hex.slice(0, 64), s: '0x' + hex.slice(64), v: 27 + recid });
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
