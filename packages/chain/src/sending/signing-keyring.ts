import { Signature, SigningKey as EthersSigningKey, Transaction, Wallet, getAddress, getBytes, type TransactionLike } from 'ethers';

export interface SigningKey {
  privateKey: string;
  address: string;
}

type DigestSigner = (digest: Uint8Array, privateKey: Uint8Array) => { signature: Uint8Array; recid: number };

/**
 * libsecp256k1 through the `secp256k1` native binding when it loads (ethers' pure-JavaScript signing was the
 * largest single cost of the worker's CPU profile after the database); both are RFC 6979 deterministic and
 * low-s, so they sign the same bytes (signing-keyring.test.ts checks it).
 */
function nativeSigner(): DigestSigner | null {
  try {
    // the binding itself, not the package index (which silently falls back to pure-JavaScript elliptic);
    // required lazily, so a machine without the native module signs with @noble/curves instead
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const native = require('secp256k1/bindings') as { ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number } };
    return (digest, privateKey) => native.ecdsaSign(digest, privateKey);
  } catch {
    return null;
  }
}

const native = nativeSigner();

interface Key {
  wallet: Wallet;
  secret: Uint8Array;
}

/** The local private keys, by lowercase address (the form stored in Postgres). */
export class SigningKeyring {
  private readonly keys = new Map<string, Key>();

  constructor(keys: readonly SigningKey[]) {
    for (const key of keys) {
      const wallet = new Wallet(key.privateKey);
      // a mismatched pair would sign from an address the nonce table does not track
      if (wallet.address !== getAddress(key.address)) {
        throw new Error(`signing key for ${key.address} derives ${wallet.address}`);
      }
      this.keys.set(wallet.address.toLowerCase(), { wallet, secret: getBytes(wallet.privateKey) });
    }
  }

  get addresses(): string[] {
    return [...this.keys.keys()];
  }

  get backend(): 'libsecp256k1' | 'ethers' {
    return native ? 'libsecp256k1' : 'ethers';
  }

  has(address: string): boolean {
    return this.keys.has(address.toLowerCase());
  }

  wallet(address: string): Wallet {
    return this.key(address).wallet;
  }

  /** The signed, serialized transaction (the bytes for eth_sendRawTransaction). */
  signTransaction(address: string, fields: TransactionLike<string>): string {
    const key = this.key(address);
    const tx = Transaction.from(fields);
    tx.signature = this.signDigest(key, tx.unsignedHash);
    return tx.serialized;
  }

  private signDigest(key: Key, digestHex: string): Signature {
    if (!native) return (key.wallet.signingKey as EthersSigningKey).sign(digestHex);
    const { signature, recid } = native(getBytes(digestHex), key.secret);
    const hex = Buffer.from(signature).toString('hex');
    return Signature.from({ r: '0x' + hex.slice(0, 64), s: '0x' + hex.slice(64), v: 27 + recid });
  }

  private key(address: string): Key {
    const key = this.keys.get(address.toLowerCase());
    if (!key) throw new Error(`no signing key for ${address}`);
    return key;
  }
}
