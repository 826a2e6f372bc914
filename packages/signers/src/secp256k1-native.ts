/** libsecp256k1's sign and recover, as the `secp256k1` package's native binding exposes them. */
export interface NativeSecp256k1 {
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaRecover(signature: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
}

function load(): NativeSecp256k1 | null {
  try {
    // the binding itself, not the package index (which silently falls back to pure-JavaScript elliptic);
    // required lazily, so a machine without the native module signs and recovers with ethers instead
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('secp256k1/bindings') as NativeSecp256k1;
  } catch {
    return null;
  }
}

/**
 * libsecp256k1 when its native module loads, else null: ethers' pure-JavaScript signing was the largest
 * single cost of the worker's CPU profile after the database, and its recovery is 25 times slower.
 */
export const nativeSecp256k1: NativeSecp256k1 | null = load();
