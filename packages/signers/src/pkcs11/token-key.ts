import { SignerError, signerErrorOf } from '../signer-error';
import { readPin } from './pin-source';
import { acquireLibrary, type LoadedLibrary } from './pkcs11-module';
import { Pkcs11UriError, parsePkcs11Uri, type Pkcs11Uri } from './pkcs11-uri';
import { SessionPool } from './session-pool';
import { closeQuietly, findKeyPair, findSlot, isSessionLost, openSession, pkcs11Reason, type Handle } from './token-access';

/** The curve a signer's key must be on, as PKCS#11 names it. */
export interface TokenCurve {
  name: string;
  /** CKA_KEY_TYPE */
  keyType: () => number;
  /** the CKA_EC_PARAMS a key of this curve may carry (the first is the one keys are made with) */
  ecParams: readonly Uint8Array[];
  /** the key's identity (its address) from its public half's CKA_EC_POINT; throws for a point that is not one */
  identityOf(ecPoint: Uint8Array): string;
}

interface Opened {
  library: LoadedLibrary;
  uri: Pkcs11Uri;
  slot: Handle;
  pin: string;
}

/**
 * One key pair in a PKCS#11 token (an HSM: CloudHSM, YubiHSM, Thales, SoftHSM), named by an RFC 7512 URI,
 * whatever its curve: the library opened once per path, `x-sessions` sessions logged in, the key found by
 * label or id and checked to be on its curve. `sign` runs C_Sign off the event loop (libuv's threads), one at
 * a time per session; a session lost to a restarted token is replaced once, and the key found again must be
 * the same key. The PIN is kept (to log in again) in a JavaScript-private field, never shown.
 */
export class TokenKey {
  private closed = false;
  readonly #opened: Opened;
  readonly #pool: SessionPool<Handle>;
  #key: Handle;

  private constructor(
    opened: Opened,
    pool: SessionPool<Handle>,
    key: Handle,
    private readonly curve: TokenCurve,
    /** the key's identity in its family's spelling (an EVM address, a base58 public key) */
    readonly identity: string,
    /** the public half's CKA_EC_POINT as the token gave it (the curve's TokenCurve reads the public key from it) */
    readonly ecPoint: Uint8Array,
    /** the key named without any secret: `pkcs11:token=…;object=…` */
    readonly description: string,
  ) {
    this.#opened = opened;
    this.#pool = pool;
    this.#key = key;
  }

  /** Opens the library, logs in and finds the key; a failure is a SignerError naming the key. */
  static async open(uri: string | Pkcs11Uri, curve: TokenCurve): Promise<TokenKey> {
    let parsed: Pkcs11Uri;
    try {
      parsed = typeof uri === 'string' ? parsePkcs11Uri(uri) : uri;
    } catch (error) {
      throw new SignerError('pkcs11', error instanceof Pkcs11UriError ? error.message : String(error));
    }
    const description = parsed.description;
    let pin: string;
    let library: LoadedLibrary;
    try {
      pin = await readPin(parsed);
      library = acquireLibrary(parsed.modulePath);
    } catch (error) {
      throw signerErrorOf(description, error);
    }
    const sessions: Handle[] = [];
    try {
      const slot = findSlot(library.pkcs11, parsed);
      for (let i = 0; i < parsed.sessions; i++) sessions.push(openSession(library.pkcs11, slot, pin));
      const found = findKeyPair(library.pkcs11, sessions[0], parsed, { name: curve.name, keyType: curve.keyType(), ecParams: curve.ecParams });
      const ecPoint = Uint8Array.from(found.ecPoint);
      return new TokenKey({ library, uri: parsed, slot, pin }, new SessionPool(sessions), found.privateKey, curve, curve.identityOf(ecPoint), ecPoint, description);
    } catch (error) {
      for (const session of sessions) closeQuietly(library.pkcs11, session);
      library.release();
      throw error instanceof SignerError ? error : new SignerError(description, pkcs11Reason(error), { cause: error });
    }
  }

  /** Sessions signing in parallel (the URI's `x-sessions`). */
  get sessions(): number {
    return this.#pool.size;
  }

  /** C_Sign with `mechanism` over `data`, into at most `outputBytes`; failures are SignerErrors naming the key. */
  async sign(mechanism: number, data: Uint8Array, outputBytes: number): Promise<Buffer> {
    if (this.closed) throw new SignerError(this.description, 'closed');
    const { pkcs11 } = this.#opened.library;
    return this.#pool
      .use(async (session, replace) => {
        const sign = (on: Handle) => {
          pkcs11.C_SignInit(on, { mechanism }, this.#key);
          return pkcs11.C_SignAsync(on, Buffer.from(data), Buffer.alloc(outputBytes));
        };
        try {
          return await sign(session);
        } catch (error) {
          if (this.closed) throw error;
          if (!isSessionLost(error)) {
            // a refused call may leave its signing operation active in the session (CKR_OPERATION_ACTIVE for
            // every later C_SignInit): the session is replaced, so one bad call never poisons the next
            closeQuietly(pkcs11, session);
            replace(openSession(pkcs11, this.#opened.slot, this.#opened.pin));
            throw error;
          }
          // the session died under us (token restarted): one new session, logged in again, the key found
          // again (and still the same key), one more try
          closeQuietly(pkcs11, session);
          const fresh = openSession(pkcs11, this.#opened.slot, this.#opened.pin);
          replace(fresh);
          const { curve } = this;
          const found = findKeyPair(pkcs11, fresh, this.#opened.uri, { name: curve.name, keyType: curve.keyType(), ecParams: curve.ecParams });
          const identity = curve.identityOf(found.ecPoint);
          if (identity !== this.identity) throw new Error(`after reconnecting, the key is another one (${identity})`);
          this.#key = found.privateKey;
          return await sign(fresh);
        }
      })
      .catch((error: unknown) => {
        throw error instanceof SignerError ? error : new SignerError(this.description, pkcs11Reason(error), { cause: error });
      });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const { pkcs11 } = this.#opened.library;
    // no C_Logout: login is per application and token, so it would log out other signers on the same token;
    // closing this signer's sessions ends its share of the login
    for (const session of await this.#pool.drain()) closeQuietly(pkcs11, session);
    this.#opened.library.release();
  }
}
