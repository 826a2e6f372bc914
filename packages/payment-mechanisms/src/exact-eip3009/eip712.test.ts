import { randomBytes, randomInt } from 'node:crypto';
import { SigningKey, TypedDataEncoder, Wallet, getAddress, hexlify, keccak256, toBeHex } from 'ethers';
import { bytesToHex, domainSeparator, hexToBytes, signatureRecovery, type Eip712Domain, type TransferAuthorization } from '@facilitator/core';
import { recoverAuthorizationSigner, transferAuthorizationDigest, TRANSFER_WITH_AUTHORIZATION_TYPES } from './eip712';

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
  // packages/evm-devnet/src/devnet.int.test.ts), so verify must refuse them too.
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
