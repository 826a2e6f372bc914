import path from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3';

/**
 * keccak256 of bytes, through the `keccak` package's native binding (the Keccak team's C code; its prebuilt
 * binaries ship in the package, so nothing is compiled at install) when it loads, else @noble/hashes. Every
 * verification hashes three times (the authorization's struct, the EIP-712 digest, the signer's address):
 * measured here, the binding does two of them in about 4 µs where @noble/hashes takes about 28 µs.
 * `keccak`'s own index silently falls back to JavaScript, so the binding's state class is loaded directly,
 * and `KECCAK_BACKEND` says which one runs (a test holds it to the native one on this machine).
 */

interface NativeKeccakState {
  initialize(rate: number, capacity: number): void;
  absorb(data: Uint8Array): void;
  absorbLastFewBits(bits: number): void;
  squeeze(length: number): Uint8Array;
}

// Keccak-256 as Ethereum uses it: rate 1088 bits, capacity 512, the original padding (0x01, not SHA-3's 0x06)
const RATE = 1088;
const CAPACITY = 512;
const KECCAK_PADDING = 0x01;

function nativeKeccak256(): ((bytes: Uint8Array) => Uint8Array) | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const load = require('node-gyp-build') as (dir: string) => unknown;
    const State = load(path.dirname(require.resolve('keccak/package.json'))) as new () => NativeKeccakState;
    if (typeof State !== 'function') return null;
    // one state, reset by each call: hashing is synchronous, so no two calls share it at once
    const state = new State();
    return (bytes) => {
      state.initialize(RATE, CAPACITY);
      state.absorb(bytes);
      state.absorbLastFewBits(KECCAK_PADDING);
      return state.squeeze(32);
    };
  } catch {
    return null;
  }
}

const native = nativeKeccak256();

/** Which implementation `keccak256` runs. */
export const KECCAK_BACKEND: 'native' | '@noble/hashes' = native ? 'native' : '@noble/hashes';

/** The 32-byte keccak256 of `bytes`. */
export const keccak256: (bytes: Uint8Array) => Uint8Array = native ?? ((bytes) => keccak_256(bytes));
