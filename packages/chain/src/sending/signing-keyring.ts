import { Wallet, getAddress } from 'ethers';

export interface SigningKey {
  privateKey: string;
  address: string;
}

/** The local private keys, by lowercase address (the form stored in Postgres). */
export class SigningKeyring {
  private readonly wallets = new Map<string, Wallet>();

  constructor(keys: readonly SigningKey[]) {
    for (const key of keys) {
      const wallet = new Wallet(key.privateKey);
      // a mismatched pair would sign from an address the nonce table does not track
      if (wallet.address !== getAddress(key.address)) {
        throw new Error(`signing key for ${key.address} derives ${wallet.address}`);
      }
      this.wallets.set(wallet.address.toLowerCase(), wallet);
    }
  }

  get addresses(): string[] {
    return [...this.wallets.keys()];
  }

  has(address: string): boolean {
    return this.wallets.has(address.toLowerCase());
  }

  wallet(address: string): Wallet {
    const wallet = this.wallets.get(address.toLowerCase());
    if (!wallet) throw new Error(`no signing key for ${address}`);
    return wallet;
  }
}
