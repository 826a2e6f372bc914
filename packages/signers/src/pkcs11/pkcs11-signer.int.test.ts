// The HSM signer against a real PKCS#11 token: SoftHSM2 holding non-extractable secp256k1 keys.
import { randomBytes } from 'ethers';
import { createSoftHsmToken, signerContract, type SoftHsmToken } from '@facilitator/signers/testing';
import { describeNeeding, softhsmMissing } from '../../../../test/support/system-tools';
import { checkSigner } from '../check-signer';
import { SignerError } from '../signer-error';
import { createSigner, createSigners } from '../signer-spec';
import { acquireLibrary, pkcs11js } from './pkcs11-module';
import { Pkcs11Signer } from './pkcs11-signer';

describeNeeding(softhsmMissing(), 'Pkcs11Signer on SoftHSM2', () => {
  let token: SoftHsmToken;
  let relayer1: { uri: string; address: string };
  let relayer2: { uri: string; address: string };

  beforeAll(async () => {
    // tokens and keys first: SoftHSM reads its token directory when the library is initialized
    token = await createSoftHsmToken({ label: `relayers-${Date.now()}` });
    relayer1 = await token.generateKey('relayer-1');
    relayer2 = await token.generateKey('relayer-2', { pin: 'value' });
  });
  afterAll(async () => {
    await token?.destroy();
  });

  signerContract('Pkcs11Signer (SoftHSM2, PIN from a file)', async () => ({
    signer: await createSigner(relayer1.uri),
    expectedAddress: relayer1.address,
    secrets: [token.pin, token.pinFile],
  }));
  signerContract('Pkcs11Signer (SoftHSM2, one session: signatures queue)', async () => ({
    signer: await createSigner(token.uri('relayer-2', { sessions: 1 })),
    expectedAddress: relayer2.address,
    secrets: [token.pin],
  }));

  const expectOneLine = async (promise: Promise<unknown>, ...parts: string[]) => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SignerError);
    const message = (error as Error).message;
    expect(message).not.toMatch(/[\r\n]/);
    expect(message).not.toContain(token.pin);
    for (const part of parts) expect(message).toContain(part);
  };

  it('names the key by token and label, without the PIN or the library', async () => {
    const signer = await createSigner(relayer2.uri);
    expect(signer.description).toBe(`pkcs11:token=${token.label};object=relayer-2`);
    expect(relayer2.uri).toContain('pin-value=');
    await signer.close();
  });

  it('keeps the private key in the token: sensitive, not extractable, its value unreadable', async () => {
    const p = pkcs11js();
    const library = acquireLibrary(token.modulePath);
    const { pkcs11 } = library;
    const slot = pkcs11.C_GetSlotList(true).find((s) => pkcs11.C_GetTokenInfo(s).label.trimEnd() === token.label)!;
    const session = pkcs11.C_OpenSession(slot, p.CKF_SERIAL_SESSION);
    try {
      pkcs11.C_Login(session, p.CKU_USER, token.pin);
      pkcs11.C_FindObjectsInit(session, [
        { type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY },
        { type: p.CKA_LABEL, value: 'relayer-1' },
      ]);
      const [key] = pkcs11.C_FindObjects(session, 1);
      pkcs11.C_FindObjectsFinal(session);
      const [extractable, sensitive] = pkcs11.C_GetAttributeValue(session, key, [{ type: p.CKA_EXTRACTABLE }, { type: p.CKA_SENSITIVE }]);
      expect({ extractable: extractable.value[0], sensitive: sensitive.value[0] }).toEqual({ extractable: 0, sensitive: 1 });
      expect(() => pkcs11.C_GetAttributeValue(session, key, [{ type: p.CKA_VALUE }])).toThrow(/CKR_ATTRIBUTE_SENSITIVE/);
    } finally {
      pkcs11.C_CloseSession(session);
      library.release();
    }
  });

  it('shares the library and the login between two signers on one token; closing one leaves the other signing', async () => {
    const [one, two] = await createSigners([relayer1.uri, relayer2.uri]);
    expect([one.address, two.address]).toEqual([relayer1.address, relayer2.address]);
    await one.close();
    await expect(checkSigner(two)).resolves.toBeUndefined();
    await two.close();
  });

  it('opens a new session when the token dropped its sessions (an HSM restart), and signs on', async () => {
    const signer = await Pkcs11Signer.open(relayer1.uri);
    const library = acquireLibrary(token.modulePath);
    try {
      const slot = library.pkcs11.C_GetSlotList(true).find((s) => library.pkcs11.C_GetTokenInfo(s).label.trimEnd() === token.label)!;
      library.pkcs11.C_CloseAllSessions(slot);
      await expect(checkSigner(signer)).resolves.toBeUndefined();
      await expect(signer.signDigest(randomBytes(32))).resolves.toBeDefined();
    } finally {
      library.release();
      await signer.close();
    }
  });

  it('a wrong PIN stops with one line naming the key', async () => {
    await expectOneLine(createSigner(token.uri('relayer-1', { pinValue: '99999999' })), `signer pkcs11:token=${token.label};object=relayer-1: C_Login: the PIN is wrong (CKR_PIN_INCORRECT)`);
  });

  it('a missing PIN file stops with one line naming the key and the file', async () => {
    const uri = token.uri('relayer-1').replace(/pin-source=file:[^&]+/, 'pin-source=file:/nonexistent/hsm-pin');
    await expectOneLine(createSigner(uri), `signer pkcs11:token=${token.label};object=relayer-1: cannot read the PIN file /nonexistent/hsm-pin (ENOENT)`);
  });

  it('a missing token stops with one line naming it and the tokens there are', async () => {
    const uri = token.uri('relayer-1').replace(`token=${token.label}`, 'token=no-such-token');
    await expectOneLine(createSigner(uri), 'signer pkcs11:token=no-such-token;object=relayer-1: no token labelled "no-such-token"', `"${token.label}"`);
  });

  it('a missing key label stops with one line naming it', async () => {
    await expectOneLine(createSigner(token.uri('relayer-9')), `signer pkcs11:token=${token.label};object=relayer-9: no private key labelled "relayer-9" on the token`);
  });

  it('a library that is not there stops with one line naming the key', async () => {
    const uri = token.uri('relayer-1').replace(`module-path=${token.modulePath}`, 'module-path=/nonexistent/libpkcs11.so');
    await expectOneLine(createSigner(uri), `signer pkcs11:token=${token.label};object=relayer-1: cannot load the PKCS#11 library /nonexistent/libpkcs11.so`);
  });

  it('a list with one bad entry opens nothing: the good signers are closed again', async () => {
    const bad = token.uri('relayer-9');
    await expectOneLine(createSigners([relayer1.uri, bad]), 'relayer-9');
    // nothing holds the library now: a new signer initializes it afresh and signs
    const signer = await createSigner(relayer1.uri);
    await expect(checkSigner(signer)).resolves.toBeUndefined();
    await signer.close();
  });

  it('refuses a list naming one key twice', async () => {
    await expectOneLine(createSigners([relayer1.uri, token.uri('relayer-1', { pin: 'value' })]), 'is the same key as', relayer1.address);
  });
});
