// A PKCS#11 library is loaded and initialized once per process and path: C_Initialize twice fails, and a
// C_Finalize would end every other signer's sessions on it. Signers share it by reference count; the last
// one to release it finalizes and unloads it (SoftHSM reads its token directory at C_Initialize, so a token
// made later is seen once no signer holds the library).
import type * as Pkcs11js from 'pkcs11js';

type Pkcs11Module = typeof Pkcs11js;

let bindings: Pkcs11Module | undefined;

/** pkcs11js, loaded on first use: a process without a PKCS#11 signer never needs its native module. */
export function pkcs11js(): Pkcs11Module {
  if (!bindings) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      bindings = require('pkcs11js') as Pkcs11Module;
    } catch (error) {
      throw new Error(`the pkcs11js native module does not load (npm rebuild pkcs11js): ${(error as Error).message.split('\n')[0]}`);
    }
  }
  return bindings;
}

export interface LoadedLibrary {
  readonly path: string;
  readonly pkcs11: Pkcs11js.PKCS11;
  /** Gives the library back; the last holder finalizes and unloads it. */
  release(): void;
}

interface Entry {
  pkcs11: Pkcs11js.PKCS11;
  holders: number;
}

const libraries = new Map<string, Entry>();

/** The library at `path`, loaded and initialized (for OS threads: signatures run on libuv's pool) if not yet. */
export function acquireLibrary(path: string): LoadedLibrary {
  let entry = libraries.get(path);
  if (!entry) {
    const binding = pkcs11js();
    const pkcs11 = new binding.PKCS11();
    try {
      pkcs11.load(path);
    } catch (error) {
      throw new Error(`cannot load the PKCS#11 library ${path}: ${(error as Error).message}`);
    }
    try {
      pkcs11.C_Initialize({ flags: binding.CKF_OS_LOCKING_OK });
    } catch (error) {
      // someone else in this process initialized it (another PKCS#11 user): it is usable as it is
      if ((error as { code?: number }).code !== binding.CKR_CRYPTOKI_ALREADY_INITIALIZED) {
        pkcs11.close();
        throw error;
      }
    }
    entry = { pkcs11, holders: 0 };
    libraries.set(path, entry);
  }
  entry.holders++;
  const held = entry;
  let released = false;
  return {
    path,
    pkcs11: held.pkcs11,
    release() {
      if (released) return;
      released = true;
      if (--held.holders > 0) return;
      libraries.delete(path);
      try {
        held.pkcs11.C_Finalize();
      } finally {
        held.pkcs11.close();
      }
    },
  };
}
