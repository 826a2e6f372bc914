import { generateKeyPairSync } from 'node:crypto';
import { inspect } from 'node:util';
import { ed25519SignerContract } from '@facilitator/signers/testing';
import { SignerError } from '../signer-error';
import { base58 } from './base58';
import { createEd25519Signer } from './ed25519-signer-spec';
import { LocalEd25519Signer } from './local-ed25519-signer';

// RFC 8032 section 7.1, test 2: the seed, its public key, and its signature of the one-byte message 0x72
const SEED = '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb';
const PUBLIC = '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c';
const SIGNATURE =
  '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00';

/** A fresh keypair as `solana-keygen` writes it: seed then public key, 64 bytes. */
function solanaKeypair(): { secret: Uint8Array; address: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { secret: Uint8Array.from(Buffer.concat([seed, pub])), address: base58(pub) };
}

const keypair = solanaKeypair();
ed25519SignerContract('LocalEd25519Signer', async () => ({
  signer: new LocalEd25519Signer(base58(keypair.secret)),
  expectedAddress: keypair.address,
  secrets: [base58(keypair.secret), Buffer.from(keypair.secret.subarray(0, 32)).toString('hex')],
}));

describe('LocalEd25519Signer', () => {
  it("signs RFC 8032's test vector", async () => {
    const signer = new LocalEd25519Signer(SEED);
    expect(Buffer.from(signer.publicKey).toString('hex')).toBe(PUBLIC);
    expect(Buffer.from(await signer.signMessage(Uint8Array.of(0x72))).toString('hex')).toBe(SIGNATURE);
  });

  it('takes the keypair as base58, as a JSON array (solana-keygen) or bytes, and the seed as hex: one address', () => {
    const forms = [base58(keypair.secret), JSON.stringify([...keypair.secret]), keypair.secret, `0x${Buffer.from(keypair.secret.subarray(0, 32)).toString('hex')}`];
    for (const form of forms) expect(new LocalEd25519Signer(form).address).toBe(keypair.address);
  });

  it('refuses a keypair whose public half is not its seed\'s, and malformed secrets, without quoting them', () => {
    const other = solanaKeypair();
    const mixed = Uint8Array.from([...keypair.secret.subarray(0, 32), ...other.secret.subarray(32)]);
    expect(() => new LocalEd25519Signer(mixed)).toThrow(`its secret key derives ${keypair.address}`);
    for (const bad of ['not base58 0OIl', '[1,2,3]', 'abcd']) {
      let error: unknown;
      try {
        new LocalEd25519Signer(bad);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SignerError);
      expect((error as Error).message).not.toContain(bad);
    }
  });

  it('keeps the key out of inspection', () => {
    const signer = new LocalEd25519Signer(keypair.secret);
    expect(inspect(signer, { showHidden: true, depth: 8 })).not.toContain(base58(keypair.secret));
  });

  it('is opened from a spec: local: here, kms: refused with the reason, anything else named without its secret', async () => {
    expect((await createEd25519Signer(`local:${base58(keypair.secret)}`)).address).toBe(keypair.address);
    await expect(createEd25519Signer('kms:alias/fee-payer')).rejects.toThrow('KMS signers hold secp256k1 keys');
    await expect(createEd25519Signer(`nope:${base58(keypair.secret)}`)).rejects.toThrow('not an Ed25519 signer');
  });
});
