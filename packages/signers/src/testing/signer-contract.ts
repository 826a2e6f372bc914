// The expectations the sending engine has of any signer, run against each backend (local key, KMS through
// the protocol server, SoftHSM): a backend passes these or it is not a signer.
import { inspect } from 'node:util';
import { Transaction, Wallet, getAddress, getBytes, keccak256, parseUnits, randomBytes, recoverAddress, verifyAuthorization, verifyTypedData } from 'ethers';
import { checkSigner } from '../check-signer';
import { signAuthorization, signTransaction, signTypedData } from '../ethereum-signing';
import { isLowS } from '../recoverable-signature';
import type { Signer } from '../signer';
import { SignerError } from '../signer-error';

export interface SignerUnderTest {
  signer: Signer;
  /** The address the key is known to have (from its private key, or KMS's/the token's public key). */
  expectedAddress: string;
  /** Strings that must never appear in the signer's description or errors (a PIN, a private key). */
  secrets?: string[];
}

/**
 * EIP-3009's TransferWithAuthorization, the typed data payers sign, written out here: key custody depends on no
 * payment mechanism (payment-mechanisms reads Solana transactions through svm-chain, which signs through here).
 */
const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
};

const SCHEME = { local: 'local:', 'aws-kms': 'kms:', pkcs11: 'pkcs11:' } as const;

function type2(nonce: number, to: string) {
  return {
    type: 2,
    chainId: 84532,
    nonce,
    to,
    data: '0x23b872dd' + nonce.toString(16).padStart(64, '0'),
    value: 0n,
    gasLimit: 90_000n,
    maxFeePerGas: parseUnits('0.2', 'gwei'),
    maxPriorityFeePerGas: 1_000n,
  };
}

/** Runs the signer contract on the signers `makeSigner` opens (called twice: one to use, one to close early). */
export function signerContract(name: string, makeSigner: () => Promise<SignerUnderTest>): void {
  describe(`${name}: the signer contract`, () => {
    let subject: SignerUnderTest;
    let signer: Signer;
    const other = Wallet.createRandom().address;

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

    it('has the address its key derives, checksummed, and a description naming its backend without a secret', () => {
      expect(signer.address).toBe(getAddress(subject.expectedAddress));
      expect(getAddress(signer.address.toLowerCase())).toBe(signer.address);
      expect(signer.description.startsWith(SCHEME[signer.backend])).toBe(true);
      expectNoSecret(signer.description);
    });

    it('shows no secret when inspected, logged or serialized', () => {
      expectNoSecret(inspect(signer, { depth: 8, showHidden: true }));
      expectNoSecret(JSON.stringify(signer));
    });

    it('signs EIP-1559 (type 2) transactions that recover to its address', async () => {
      for (let nonce = 0; nonce < 3; nonce++) {
        const raw = await signTransaction(signer, type2(nonce, other));
        const parsed = Transaction.from(raw);
        expect(parsed.from).toBe(signer.address);
        expect(parsed.type).toBe(2);
        expect(isLowS(parsed.signature!)).toBe(true);
      }
    });

    it('signs EIP-7702 (type 4) transactions carrying its own authorization', async () => {
      const delegate = Wallet.createRandom().address;
      const authorization = await signAuthorization(signer, { address: delegate, nonce: 8, chainId: 84532 });
      const raw = await signTransaction(signer, { ...type2(7, signer.address), type: 4, authorizationList: [authorization] });
      const parsed = Transaction.from(raw);
      expect(parsed.type).toBe(4);
      expect(parsed.from).toBe(signer.address);
      const [carried] = parsed.authorizationList!;
      expect(carried.address).toBe(delegate);
      expect(verifyAuthorization(carried, carried.signature)).toBe(signer.address);
    });

    it('signs EIP-712 typed data that verifies to its address', async () => {
      const domain = { name: 'USDC', version: '2', chainId: 84532, verifyingContract: other };
      const value = { from: signer.address, to: other, value: 10_000n, validAfter: 0n, validBefore: 2n ** 40n, nonce: keccak256(randomBytes(32)) };
      const signature = await signTypedData(signer, domain, TRANSFER_WITH_AUTHORIZATION_TYPES, value);
      expect(getBytes(signature)).toHaveLength(65);
      expect(verifyTypedData(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, value, signature)).toBe(signer.address);
    });

    it('signs EIP-7702 authorizations that verify to its address (chain 0 included)', async () => {
      for (const chainId of [84532n, 0n]) {
        const authorization = await signAuthorization(signer, { address: other, nonce: 3n, chainId });
        expect(authorization).toMatchObject({ address: other, nonce: 3n, chainId });
        expect(verifyAuthorization({ address: other, nonce: 3n, chainId }, authorization.signature)).toBe(signer.address);
      }
    });

    it('gives low s and v 27/28 over many digests, each recovering to its address', async () => {
      for (let i = 0; i < 24; i++) {
        const digest = randomBytes(32);
        const signature = await signer.signDigest(digest);
        expect({ i, lowS: isLowS(signature), v: signature.v === 27 || signature.v === 28 }).toEqual({ i, lowS: true, v: true });
        expect(recoverAddress(digest, signature)).toBe(signer.address);
      }
    });

    it('signs 50 digests at once, every signature valid', async () => {
      const digests = Array.from({ length: 50 }, () => randomBytes(32));
      const signatures = await Promise.all(digests.map((digest) => signer.signDigest(digest)));
      expect(signatures.map((signature, i) => recoverAddress(digests[i], signature))).toEqual(digests.map(() => signer.address));
    });

    it('passes checkSigner', async () => {
      await expect(checkSigner(signer)).resolves.toBeUndefined();
    });

    it('refuses a digest that is not 32 bytes, and a transaction from another address, naming itself', async () => {
      await expect(signer.signDigest(new Uint8Array(31))).rejects.toThrow(SignerError);
      await expect(signer.signDigest(new Uint8Array(31))).rejects.toThrow(signer.description);
      const refused = signTransaction(signer, { ...type2(1, other), from: other });
      await expect(refused).rejects.toThrow(`signer ${signer.description}: asked to sign a transaction from ${other}`);
    });

    it('signs nothing once closed', async () => {
      const { signer: closing } = await makeSigner();
      await closing.close();
      const refused = closing.signDigest(randomBytes(32));
      await expect(refused).rejects.toThrow(SignerError);
      await expect(refused).rejects.toThrow(closing.description);
    });
  });
}
