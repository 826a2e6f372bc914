import { LocalKeySigner, signTransaction, type Signer } from '@facilitator/signers';
import { getAddress, type TransactionLike } from 'ethers';

/** A private key given as configuration (RELAYER_PRIVATE_KEYS, a devnet account): signed with in this process. */
export interface SigningKey {
  privateKey: string;
  address: string;
}

/**
 * The keys this provider sends from, by lowercase address (the form stored in Postgres), whatever holds
 * them (the signer port: a local key, AWS KMS, a PKCS#11 HSM). The nonce table, batching and sync sends
 * do not know where a key is.
 */
export class SignerKeyring {
  private readonly signers = new Map<string, Signer>();

  constructor(keys: readonly (Signer | SigningKey)[]) {
    for (const key of keys) {
      // a configured key whose address does not derive from it would sign from an address nobody tracks
      const signer = 'signDigest' in key ? key : new LocalKeySigner(key.privateKey, { expectedAddress: key.address });
      this.signers.set(getAddress(signer.address).toLowerCase(), signer);
    }
  }

  get addresses(): string[] {
    return [...this.signers.keys()];
  }

  has(address: string): boolean {
    return this.signers.has(address.toLowerCase());
  }

  /** The key's signature over a 32-byte digest, serialized (65 bytes, hex). */
  async signDigest(address: string, digest: Uint8Array): Promise<string> {
    const signer = this.signers.get(address.toLowerCase());
    if (!signer) throw new Error(`no signing key for ${address}`);
    return (await signer.signDigest(digest)).serialized;
  }

  /** The signed, serialized transaction (the bytes for eth_sendRawTransaction). */
  signTransaction(address: string, fields: TransactionLike<string>): Promise<string> {
    const signer = this.signers.get(address.toLowerCase());
    if (!signer) return Promise.reject(new Error(`no signing key for ${address}`));
    return signTransaction(signer, fields);
  }
}
