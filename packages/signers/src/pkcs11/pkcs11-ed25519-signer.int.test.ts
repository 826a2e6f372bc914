// The Ed25519 HSM signer against a real PKCS#11 token: SoftHSM2 holding non-extractable Ed25519 keys
// (Solana's fee payer and treasury), beside a secp256k1 key that must not be taken for one.
import { createSoftHsmToken, ed25519SignerContract, type SoftHsmToken } from '@facilitator/signers/testing';
import { describeNeeding, softhsmMissing } from '../../../../test/support/system-tools';
import { createEd25519Signer } from '../ed25519/ed25519-signer-spec';
import { createSigner } from '../signer-spec';
import { SignerError } from '../signer-error';
import { CKM_EDDSA, ED25519_CURVE, Pkcs11Ed25519Signer } from './pkcs11-ed25519-signer';
import { TokenKey } from './token-key';

describeNeeding(softhsmMissing(), 'Pkcs11Ed25519Signer on SoftHSM2', () => {
  let token: SoftHsmToken;
  let feePayer: { uri: string; address: string };
  let evmKey: { uri: string; address: string };

  beforeAll(async () => {
    token = await createSoftHsmToken({ label: `solana-${Date.now()}` });
    feePayer = await token.generateKey('fee-payer', { curve: 'ed25519' });
    evmKey = await token.generateKey('relayer', { curve: 'secp256k1' });
  });
  afterAll(async () => {
    await token?.destroy();
  });

  ed25519SignerContract('Pkcs11Ed25519Signer (SoftHSM2, PIN from a file)', async () => ({
    signer: await createEd25519Signer(feePayer.uri),
    expectedAddress: feePayer.address,
    secrets: [token.pin, token.pinFile],
  }));
  ed25519SignerContract('Pkcs11Ed25519Signer (SoftHSM2, one session: signatures queue)', async () => ({
    signer: await Pkcs11Ed25519Signer.open(token.uri('fee-payer', { sessions: 1 })),
    expectedAddress: feePayer.address,
    secrets: [token.pin],
  }));

  it('names the key by token and label, and its address is the base58 public key', async () => {
    const signer = await createEd25519Signer(feePayer.uri);
    expect(signer.description).toBe(`pkcs11:token=${token.label};object=fee-payer`);
    expect(signer.address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    await signer.close();
  });

  it('never takes a key of the other curve: a secp256k1 key is no Ed25519 signer, an Ed25519 key no EVM signer', async () => {
    const asEd25519 = await createEd25519Signer(evmKey.uri).catch((e: unknown) => e);
    expect(asEd25519).toBeInstanceOf(SignerError);
    expect((asEd25519 as Error).message).toContain('is not a Ed25519 key');
    const asEvm = await createSigner(feePayer.uri).catch((e: unknown) => e);
    expect(asEvm).toBeInstanceOf(SignerError);
    expect((asEvm as Error).message).toContain('is not a secp256k1 key');
  });

  it('a call the token refuses leaves no operation active: the one session signs on after it', async () => {
    const key = await TokenKey.open(token.uri('fee-payer', { sessions: 1 }), ED25519_CURVE);
    try {
      // zero-length data is refused before the token finishes the operation C_SignInit began
      await expect(key.sign(CKM_EDDSA, new Uint8Array(0), 64)).rejects.toThrow(SignerError);
      expect(await key.sign(CKM_EDDSA, Buffer.from('after'), 64)).toHaveLength(64);
    } finally {
      await key.close();
    }
  });

  it('refuses a key the token does not hold, naming the token and not the PIN', async () => {
    const error = await createEd25519Signer(token.uri('missing')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignerError);
    expect((error as Error).message).toContain('no private key labelled "missing"');
    expect((error as Error).message).not.toContain(token.pin);
  });
});
