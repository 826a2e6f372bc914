import { randomBytes, randomInt } from 'node:crypto';
import { SigningKey, TypedDataEncoder, Wallet, getAddress, hexlify, keccak256, toBeHex } from 'ethers';
import {
  TRANSFER_WITH_AUTHORIZATION_TYPES,
  bytesToHex,
  domainSeparator,
  hexToBytes,
  recoverAuthorizationSigner,
  transferAuthorizationDigest,
  type Eip712Domain,
  type TransferAuthorization,
} from './eip712';
import { ethersRecovery, signatureRecovery } from './signature-recovery';

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const MAX_UINT256 = (1n << 256n) - 1n;

const randomHex = (bytes: number) => hexlify(randomBytes(bytes));
const randomAddress = () => (randomInt(2) ? getAddress(randomHex(20)) : randomHex(20)); // checksummed or lowercase
const randomUint256 = () => [0n, 1n, MAX_UINT256, BigInt(randomHex(randomInt(1, 33)))][randomInt(4)];

function randomDomain(): Eip712Domain {
  const names = ['USDC', 'USD Coin', '', 'Ünïcödé ✓ token', randomHex(randomInt(1, 40))];
  return {
    name: names[randomInt(names.length)],
    version: String(randomInt(1, 10)),
    chainId: [1, 8453, 84532, Number.MAX_SAFE_INTEGER, randomInt(1, 2 ** 48 - 1)][randomInt(5)],
    verifyingContract: randomAddress(),
  };
}

function randomAuthorization(from = randomAddress()): TransferAuthorization {
  return {
    from,
    to: randomAddress(),
    value: randomUint256(),
    validAfter: randomUint256(),
    validBefore: randomUint256(),
    nonce: randomHex(32),
  };
}

const USDC_DOMAIN: Eip712Domain = {
  name: 'USDC',
  version: '2',
  chainId: 84532,
  verifyingContract: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
};

async function signedByWallet() {
  const wallet = Wallet.createRandom();
  const authorization = randomAuthorization(wallet.address);
  const signature = await wallet.signTypedData(USDC_DOMAIN, TRANSFER_WITH_AUTHORIZATION_TYPES, authorization);
  const digest = transferAuthorizationDigest(domainSeparator(USDC_DOMAIN), authorization);
  return { wallet, authorization, signature, digest };
}

/** Rewrites the bytes of a 65-byte signature; `edit` gets r ‖ s ‖ v as a mutable copy. */
function editSignature(signature: string, edit: (bytes: Uint8Array) => void): string {
  const bytes = hexToBytes(signature);
  edit(bytes);
  return bytesToHex(bytes);
}

describe('domainSeparator', () => {
  it('equals ethers TypedDataEncoder.hashDomain for random domains', () => {
    for (let i = 0; i < 200; i++) {
      const domain = randomDomain();
      expect({ domain, hash: bytesToHex(domainSeparator(domain)) }).toEqual({ domain, hash: TypedDataEncoder.hashDomain(domain) });
    }
  });
});

describe('transferAuthorizationDigest', () => {
  it('equals ethers TypedDataEncoder.hash for random domains and authorizations', () => {
    for (let i = 0; i < 200; i++) {
      const domain = randomDomain();
      const auth = randomAuthorization();
      const digest = bytesToHex(transferAuthorizationDigest(domainSeparator(domain), auth));
      const expected = TypedDataEncoder.hash(domain, TRANSFER_WITH_AUTHORIZATION_TYPES, auth);
      expect({ domain, auth, digest }).toEqual({ domain, auth, digest: expected });
    }
  });
});

describe('recoverAuthorizationSigner', () => {
  it("returns the signer's lowercase address for a Wallet.signTypedData signature", async () => {
    for (let i = 0; i < 20; i++) {
      const { wallet, signature, digest } = await signedByWallet();
      expect(recoverAuthorizationSigner(digest, signature)).toEqual({ ok: true, address: wallet.address.toLowerCase() });
    }
  });

  it('accepts an uppercase 0X prefix and uppercase hex', async () => {
    const { wallet, signature, digest } = await signedByWallet();
    expect(recoverAuthorizationSigner(digest, '0X' + signature.slice(2).toUpperCase())).toEqual({
      ok: true,
      address: wallet.address.toLowerCase(),
    });
  });

  it('returns another address for a different message', async () => {
    const { wallet, signature, digest } = await signedByWallet();
    const other = hexToBytes(keccak256(digest));
    const result = recoverAuthorizationSigner(other, signature);
    expect(result.ok && result.address).not.toBe(wallet.address.toLowerCase());
  });

  it('refuses the high-s twin of a valid signature, which plain ecrecover would accept', async () => {
    const { wallet, signature, digest } = await signedByWallet();
    const s = BigInt(bytesToHex(hexToBytes(signature).subarray(32, 64)));
    const twin = editSignature(signature, (bytes) => {
      bytes.set(hexToBytes(toBeHex(SECP256K1_N - s, 32)), 32);
      bytes[64] = bytes[64] === 27 ? 28 : 27;
    });
    // The twin is a real signature by the same key: only the low-s rule tells them apart.
    const twinBytes = hexToBytes(twin);
    const twinKey = signatureRecovery.recoverPublicKey(twinBytes.subarray(0, 64), twinBytes[64] - 27, digest);
    expect(twinKey && bytesToHex(twinKey)).toBe(SigningKey.computePublicKey(wallet.privateKey, false));

    expect(recoverAuthorizationSigner(digest, twin)).toEqual({ ok: false, reason: expect.stringMatching(/'s' value/) });
  });

  it.each([26, 29, 30, 0x1b + 0x80, 255])('refuses v = %i', async (v) => {
    const { signature, digest } = await signedByWallet();
    const bad = editSignature(signature, (bytes) => (bytes[64] = v));
    expect(recoverAuthorizationSigner(digest, bad)).toEqual({ ok: false, reason: expect.stringMatching(/'v' value/) });
  });

  // USDC's ECRecover reverts "ECRecover: invalid signature 'v' value" for v = 0/1 (shown on the real contract in
  // packages/devnet/src/devnet.int.test.ts), so verify must refuse them too.
  it('refuses v = 0/1 (the y parity without the 27), as the token contract does', async () => {
    const { signature, digest } = await signedByWallet();
    const zeroBased = editSignature(signature, (bytes) => (bytes[64] -= 27));
    expect(recoverAuthorizationSigner(digest, zeroBased)).toEqual({ ok: false, reason: expect.stringMatching(/'v' value/) });
  });

  it.each([0, 1, 64, 66, 130])('refuses a %i-byte signature', async (length) => {
    const { signature, digest } = await signedByWallet();
    const bytes = new Uint8Array(length);
    bytes.set(hexToBytes(signature).subarray(0, Math.min(length, 65)));
    expect(recoverAuthorizationSigner(digest, bytesToHex(bytes))).toEqual({
      ok: false,
      reason: expect.stringMatching(`signature is ${length} bytes`),
    });
  });

  it('refuses r = 0 and s = 0', async () => {
    const { signature, digest } = await signedByWallet();
    for (const offset of [0, 32]) {
      const zeroed = editSignature(signature, (bytes) => bytes.fill(0, offset, offset + 32));
      expect(recoverAuthorizationSigner(digest, zeroed).ok).toBe(false);
    }
  });
});

describe('signatureRecovery', () => {
  it('uses the native libsecp256k1 binding on this machine', () => {
    expect(signatureRecovery.backend).toBe('libsecp256k1');
    expect(ethersRecovery.backend).toBe('ethers');
  });

  it('agrees with the ethers fallback on random keys and digests', () => {
    for (let i = 0; i < 100; i++) {
      const key = new SigningKey(randomHex(32));
      const digest = randomBytes(32);
      const sig = key.sign(digest);
      const rs = hexToBytes(sig.r + sig.s.slice(2));
      const native = signatureRecovery.recoverPublicKey(rs, sig.yParity, digest);
      const fallback = ethersRecovery.recoverPublicKey(rs, sig.yParity, digest);
      expect(native && bytesToHex(native)).toBe(key.publicKey);
      expect(fallback && bytesToHex(fallback)).toBe(key.publicKey);
      // The other recovery id yields a different key (or none) in both implementations alike.
      const nativeOther = signatureRecovery.recoverPublicKey(rs, 1 - sig.yParity, digest);
      const fallbackOther = ethersRecovery.recoverPublicKey(rs, 1 - sig.yParity, digest);
      expect(nativeOther && bytesToHex(nativeOther)).toBe(fallbackOther && bytesToHex(fallbackOther));
    }
  });

  it('both return null when nothing recovers', () => {
    const digest = randomBytes(32);
    const rZero = new Uint8Array(64);
    rZero.set(randomBytes(32), 32);
    const rOverflow = new Uint8Array(64).fill(0xff);
    for (const rs of [rZero, rOverflow]) {
      expect(signatureRecovery.recoverPublicKey(rs, 0, digest)).toBeNull();
      expect(ethersRecovery.recoverPublicKey(rs, 0, digest)).toBeNull();
    }
  });
});
