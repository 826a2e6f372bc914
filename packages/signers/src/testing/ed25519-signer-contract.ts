// The expectations a Solana sender has of any Ed25519 signer, run against each backend (a local key,
// SoftHSM): a backend passes these or it is not an Ed25519 signer.
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { base58 } from '../ed25519/base58';
import type { Ed25519Signer } from '../ed25519/ed25519-signer';
import { verifyEd25519 } from '../ed25519/ed25519-public-key';
import { SignerError } from '../signer-error';

export interface Ed25519SignerUnderTest {
  signer: Ed25519Signer;
  /** the base58 public key the key is known to have */
  expectedAddress: string;
  /** strings that must never appear in the signer's description, errors or inspection (a PIN, a secret key) */
  secrets?: string[];
}

const SCHEME = { local: 'local:', pkcs11: 'pkcs11:' } as const;
/** the largest Solana transaction (its message is a little smaller) */
const PACKET_BYTES = 1232;

/** Runs the contract on the signers `makeSigner` opens (called twice: one to use, one to close early). */
export function ed25519SignerContract(name: string, makeSigner: () => Promise<Ed25519SignerUnderTest>): void {
  describe(`${name}: the Ed25519 signer contract`, () => {
    let subject: Ed25519SignerUnderTest;
    let signer: Ed25519Signer;

    beforeAll(async () => {
      subject = await makeSigner();
      signer = subject.signer;
    });
    afterAll(async () => {
      await signer?.close();
    });

    const expectNoSecret = (text: string) => {
      for (const secret of subject.secrets ?? []) expect(text).not.toContain(secret);
    };

    it('has the address its key derives (base58 of its 32-byte public key) and a description naming its backend without a secret', () => {
      expect(signer.address).toBe(subject.expectedAddress);
      expect(signer.publicKey).toHaveLength(32);
      expect(base58(signer.publicKey)).toBe(signer.address);
      expect(signer.description.startsWith(SCHEME[signer.backend])).toBe(true);
      expectNoSecret(signer.description);
    });

    it('shows no secret when inspected, logged or serialized', () => {
      expectNoSecret(inspect(signer, { depth: 8, showHidden: true }));
      expectNoSecret(JSON.stringify(signer) ?? '');
      expectNoSecret(String(signer));
    });

    it('signs messages of any length up to a whole packet, each verifying to its public key and no other message', async () => {
      for (const length of [1, 32, 200, PACKET_BYTES]) {
        const message = randomBytes(length);
        const signature = await signer.signMessage(message);
        expect(signature).toHaveLength(64);
        expect(verifyEd25519(signer.publicKey, message, signature)).toBe(true);
        expect(verifyEd25519(signer.publicKey, Buffer.concat([message, Buffer.of(0)]), signature)).toBe(false);
      }
    });

    it('signs deterministically (RFC 8032): one message, one signature', async () => {
      const message = randomBytes(100);
      expect(Buffer.from(await signer.signMessage(message))).toEqual(Buffer.from(await signer.signMessage(message)));
    });

    it('signs 50 messages at once, every signature valid', async () => {
      const messages = Array.from({ length: 50 }, () => randomBytes(180));
      const signatures = await Promise.all(messages.map((m) => signer.signMessage(m)));
      signatures.forEach((signature, i) => expect(verifyEd25519(signer.publicKey, messages[i], signature)).toBe(true));
    });

    it('refuses an empty message, and signs on after it', async () => {
      await expect(signer.signMessage(new Uint8Array(0))).rejects.toThrow(SignerError);
      const message = randomBytes(64);
      expect(verifyEd25519(signer.publicKey, message, await signer.signMessage(message))).toBe(true);
    });

    it('signs nothing once closed', async () => {
      const { signer: early } = await makeSigner();
      await early.close();
      const error = await early.signMessage(Buffer.from('late')).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SignerError);
      expect((error as Error).message).toContain(early.description);
      expectNoSecret((error as Error).message);
    });
  });
}
