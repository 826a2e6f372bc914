import { inspect } from 'node:util';
import { Transaction, Wallet, getBytes, parseUnits, randomBytes } from 'ethers';
import { signerContract } from '@facilitator/signers/testing';
import { signTransaction } from './ethereum-signing';
import { LocalKeySigner } from './local-key-signer';
import { SignerError } from './signer-error';

signerContract('LocalKeySigner', async () => {
  const wallet = Wallet.createRandom();
  return { signer: new LocalKeySigner(wallet.privateKey), expectedAddress: wallet.address, secrets: [wallet.privateKey, wallet.privateKey.slice(2)] };
});

describe('LocalKeySigner', () => {
  const wallets = [Wallet.createRandom(), Wallet.createRandom(), Wallet.createRandom()];

  it('signs with libsecp256k1 on this machine', () => {
    expect(new LocalKeySigner(wallets[0].privateKey).engine).toBe('libsecp256k1');
  });

  it('signs the same bytes with libsecp256k1 as with ethers for many transactions, and they recover to the sender', async () => {
    for (let i = 0; i < 50; i++) {
      const wallet = wallets[i % wallets.length];
      const native = new LocalKeySigner(wallet.privateKey);
      const ethers = new LocalKeySigner(wallet.privateKey, { engine: 'ethers' });
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
      const ours = await signTransaction(native, fields);
      expect(ours).toBe(await signTransaction(ethers, fields));
      expect(ours).toBe(await wallet.signTransaction(fields));
      expect(Transaction.from(ours).from).toBe(wallet.address);
    }
  });

  it('signs digests synchronously, the same signature as signDigest', async () => {
    const signer = new LocalKeySigner(wallets[0].privateKey);
    const digest = randomBytes(32);
    expect(signer.signDigestSync(digest).serialized).toBe((await signer.signDigest(digest)).serialized);
  });

  it('refuses a key that does not derive the expected address, and a malformed key, without echoing the key', () => {
    expect(() => new LocalKeySigner(wallets[0].privateKey, { expectedAddress: wallets[1].address })).toThrow(
      `signer local:${wallets[1].address}: its private key derives ${wallets[0].address}`,
    );
    const short = wallets[0].privateKey.slice(0, 40);
    expect(() => new LocalKeySigner(short)).toThrow(SignerError);
    expect(() => new LocalKeySigner(short)).not.toThrow(short);
  });

  it('never shows its private key when inspected, logged or serialized', () => {
    const wallet = wallets[2];
    const signer = new LocalKeySigner(getBytes(wallet.privateKey));
    const hex = wallet.privateKey.slice(2);
    expect(inspect(signer, { depth: 5, showHidden: true })).not.toContain(hex);
    expect(JSON.stringify(signer)).not.toContain(hex);
    expect(String(signer.description)).toBe(`local:${wallet.address}`);
  });
});
