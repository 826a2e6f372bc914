import { Transaction, Wallet, parseUnits } from 'ethers';
import { SigningKeyring } from './signing-keyring';

const wallets = [Wallet.createRandom(), Wallet.createRandom(), Wallet.createRandom()];
const keyring = new SigningKeyring(wallets.map((w) => ({ privateKey: w.privateKey, address: w.address })));

describe('SigningKeyring', () => {
  it('signs with libsecp256k1 on this machine', () => {
    expect(keyring.backend).toBe('libsecp256k1');
  });

  it('signs the same bytes as ethers for many transactions, and they recover to the sender', async () => {
    for (let i = 0; i < 50; i++) {
      const wallet = wallets[i % wallets.length];
      const fields = {
        type: 2,
        chainId: 84532,
        nonce: i * 7,
        to: wallets[(i + 1) % wallets.length].address,
        data: '0x23b872dd' + i.toString(16).padStart(64, '0'),
        value: 0n,
        gasLimit: 90_000n + BigInt(i),
        maxFeePerGas: parseUnits('0.2', 'gwei') + BigInt(i),
        maxPriorityFeePerGas: 1_000n,
      };
      const ours = keyring.signTransaction(wallet.address, fields);
      expect(ours).toBe(await wallet.signTransaction(fields));
      expect(Transaction.from(ours).from).toBe(wallet.address);
    }
  });

  it('refuses an address it has no key for, and a key that does not match its address', () => {
    expect(() => keyring.signTransaction(Wallet.createRandom().address, { type: 2, chainId: 1 })).toThrow(/no signing key/);
    expect(() => new SigningKeyring([{ privateKey: wallets[0].privateKey, address: wallets[1].address }])).toThrow(/derives/);
  });
});
