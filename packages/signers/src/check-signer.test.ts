import { Wallet, type Signature } from 'ethers';
import { checkSigner } from './check-signer';
import { signAuthorization } from './ethereum-signing';
import { LocalKeySigner } from './local-key-signer';
import type { Signer } from './signer';
import { SignerError } from './signer-error';

/** A signer that claims one address and signs with whatever `sign` does. */
function pretending(address: string, sign: (digest: Uint8Array) => Promise<Signature>): Signer {
  return { address, backend: 'pkcs11', description: 'pkcs11:token=t;object=k', signDigest: sign, close: async () => undefined };
}

describe('checkSigner', () => {
  it('passes a signer that signs as its address', async () => {
    await expect(checkSigner(new LocalKeySigner(Wallet.createRandom().privateKey))).resolves.toBeUndefined();
  });

  it('stops a signer whose signature recovers to another address, with one line naming it', async () => {
    const other = new LocalKeySigner(Wallet.createRandom().privateKey);
    const claimed = Wallet.createRandom().address;
    const error = await checkSigner(pretending(claimed, (digest) => other.signDigest(digest))).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignerError);
    expect((error as Error).message).toBe(`signer pkcs11:token=t;object=k: its signature recovers to ${other.address}, not to its address ${claimed}`);
  });

  it('stops a signer that cannot sign, keeping the cause on one line', async () => {
    const error = await checkSigner(pretending(Wallet.createRandom().address, async () => Promise.reject(new Error('token\nremoved')))).catch((e: unknown) => e);
    expect((error as Error).message).toBe('signer pkcs11:token=t;object=k: cannot sign: token removed');
  });
});

describe('signAuthorization', () => {
  it('needs the nonce and the chain id (a signer has no provider to look them up)', async () => {
    const signer = new LocalKeySigner(Wallet.createRandom().privateKey);
    await expect(signAuthorization(signer, { address: signer.address, chainId: 1 })).rejects.toThrow('needs the nonce and the chain id');
  });
});
