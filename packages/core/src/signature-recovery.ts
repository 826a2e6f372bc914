import { SigningKey } from 'ethers';

/**
 * Public-key recovery with libsecp256k1 through the `secp256k1` native binding (~40x faster than pure
 * JavaScript), falling back to ethers when the binding cannot load. `secp256k1`'s own index silently
 * falls back to the slow `elliptic`, so the native module is loaded directly to know which one runs.
 */
interface SignatureRecovery {
  readonly backend: 'libsecp256k1' | 'ethers';
  /** 65-byte uncompressed public key, or null when nothing recovers. */
  recoverPublicKey(rs: Uint8Array, recoveryId: number, digest: Uint8Array): Uint8Array | null;
}

function nativeRecovery(): SignatureRecovery | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const native = require('secp256k1/bindings') as {
      ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean, out?: Uint8Array): Uint8Array;
    };
    return {
      backend: 'libsecp256k1',
      recoverPublicKey(rs, recoveryId, digest) {
        try {
          return native.ecdsaRecover(rs, recoveryId, digest, false);
        } catch {
          return null;
        }
      },
    };
  } catch {
    return null;
  }
}

const bytesHex = (bytes: Uint8Array) => '0x' + Buffer.from(bytes).toString('hex');

const ethersRecovery: SignatureRecovery = {
  backend: 'ethers',
  recoverPublicKey(rs, recoveryId, digest) {
    try {
      const hex = SigningKey.recoverPublicKey(digest, {
        r: bytesHex(rs.subarray(0, 32)),
        s: bytesHex(rs.subarray(32, 64)),
        v: 27 + recoveryId,
      });
      return Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));
    } catch {
      return null;
    }
  },
};

export const signatureRecovery: SignatureRecovery = nativeRecovery() ?? ethersRecovery;
export { ethersRecovery };
