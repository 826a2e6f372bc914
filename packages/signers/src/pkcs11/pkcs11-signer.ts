import { computeAddress, hexlify, type Signature } from 'ethers';
import type * as Pkcs11js from 'pkcs11js';
import { SECP256K1_EC_PARAMS, publicKeyFromEcPoint } from '../der';
import { recoverableSignature } from '../recoverable-signature';
import type { Signer } from '../signer';
import { SignerError, signerErrorOf } from '../signer-error';
import { readPin } from './pin-source';
import { acquireLibrary, pkcs11js, type LoadedLibrary } from './pkcs11-module';
import { Pkcs11UriError, parsePkcs11Uri, type Pkcs11Uri } from './pkcs11-uri';
import { SessionPool } from './session-pool';

type Handle = Pkcs11js.Handle;

/**
 * Return values that mean the session or its login is gone (an HSM restarted, a network HSM reconnected):
 * a private key's handle is valid only while logged in, so it goes with them.
 */
const SESSION_LOST = [
  'CKR_SESSION_HANDLE_INVALID',
  'CKR_SESSION_CLOSED',
  'CKR_USER_NOT_LOGGED_IN',
  'CKR_OBJECT_HANDLE_INVALID',
  'CKR_KEY_HANDLE_INVALID',
  'CKR_DEVICE_REMOVED',
  'CKR_TOKEN_NOT_PRESENT',
];

const WORDS: Record<string, string> = {
  CKR_PIN_INCORRECT: 'the PIN is wrong',
  CKR_PIN_LOCKED: 'the PIN is locked',
  CKR_PIN_LEN_RANGE: 'the PIN has the wrong length',
  CKR_PIN_EXPIRED: 'the PIN has expired',
};

function pkcs11Reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const name = /CKR_[A-Z_]+/.exec(message)?.[0];
  const method = (error as { method?: string }).method;
  const words = name && WORDS[name] ? `${WORDS[name]} (${name})` : message;
  return method ? `${method}: ${words}` : words;
}

const isSessionLost = (error: unknown) => SESSION_LOST.some((code) => error instanceof Error && error.message.includes(code));

const label = (text: string) => text.replace(/[\s\0]+$/, '');

interface Opened {
  library: LoadedLibrary;
  uri: Pkcs11Uri;
  slot: Handle;
  pin: string;
}

/**
 * A secp256k1 key in a PKCS#11 token (an HSM: CloudHSM, YubiHSM, Thales, SoftHSM), named by an RFC 7512
 * URI. The key never leaves the token: it is found by label or id, its address comes from its public key's
 * CKA_EC_POINT, and each signature is C_Sign with CKM_ECDSA over the 32-byte digest (r‖s), made low-s with
 * v found by recovery. Signatures run off the event loop (libuv's threads), one at a time per session.
 */
export class Pkcs11Signer implements Signer {
  readonly backend = 'pkcs11' as const;
  private closed = false;
  // JavaScript-private: the PIN (kept to log in again after a reconnect) is not shown by inspection or logs
  readonly #opened: Opened;
  readonly #pool: SessionPool<Handle>;
  #key: Handle;

  private constructor(
    opened: Opened,
    pool: SessionPool<Handle>,
    key: Handle,
    readonly address: string,
    readonly description: string,
  ) {
    this.#opened = opened;
    this.#pool = pool;
    this.#key = key;
  }

  /** Opens the library (once per path), logs in and finds the key; a failure is a SignerError naming the key. */
  static async open(uri: string | Pkcs11Uri): Promise<Pkcs11Signer> {
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
      const key = findKey(library.pkcs11, sessions[0], parsed);
      const address = computeAddress(hexlify(key.publicKey));
      return new Pkcs11Signer({ library, uri: parsed, slot, pin }, new SessionPool(sessions), key.privateKey, address, description);
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

  async signDigest(digest: Uint8Array): Promise<Signature> {
    if (this.closed) throw new SignerError(this.description, 'closed');
    if (digest.length !== 32) throw new SignerError(this.description, `a digest is 32 bytes, not ${digest.length}`);
    const { pkcs11 } = this.#opened.library;
    const { CKM_ECDSA } = pkcs11js();
    const raw = await this.#pool.use(async (session, replace) => {
      const sign = (on: Handle) => {
        pkcs11.C_SignInit(on, { mechanism: CKM_ECDSA }, this.#key);
        return pkcs11.C_SignAsync(on, Buffer.from(digest), Buffer.alloc(64));
      };
      try {
        return await sign(session);
      } catch (error) {
        if (!isSessionLost(error) || this.closed) throw error;
        // the session died under us (token restarted): one new session, logged in again, the key found
        // again (and still the same key), one more try
        closeQuietly(pkcs11, session);
        const fresh = openSession(pkcs11, this.#opened.slot, this.#opened.pin);
        replace(fresh);
        const found = findKey(pkcs11, fresh, this.#opened.uri);
        if (computeAddress(hexlify(found.publicKey)) !== this.address) throw new Error(`after reconnecting, the key is another one (${computeAddress(hexlify(found.publicKey))})`);
        this.#key = found.privateKey;
        return await sign(fresh);
      }
    }).catch((error: unknown) => {
      throw error instanceof SignerError ? error : new SignerError(this.description, pkcs11Reason(error), { cause: error });
    });
    if (raw.length !== 64) throw new SignerError(this.description, `C_Sign returned ${raw.length} bytes, not r‖s (64)`);
    try {
      return recoverableSignature(digest, raw.subarray(0, 32), raw.subarray(32), this.address);
    } catch (error) {
      throw signerErrorOf(this.description, error);
    }
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

function closeQuietly(pkcs11: Pkcs11js.PKCS11, session: Handle): void {
  try {
    pkcs11.C_CloseSession(session);
  } catch {
    // already gone with the token
  }
}

/** A CK_ULONG (a slot id, a key type) as pkcs11js returns it: the native-endian bytes of an unsigned long. */
function ulong(bytes: Buffer): number {
  return bytes.length === 8 ? Number(bytes.readBigUInt64LE(0)) : bytes.readUIntLE(0, bytes.length);
}

function findSlot(pkcs11: Pkcs11js.PKCS11, uri: Pkcs11Uri): Handle {
  const tokens = pkcs11.C_GetSlotList(true).map((slot) => ({ slot, info: pkcs11.C_GetTokenInfo(slot) }));
  const matching = tokens.filter(
    ({ slot, info }) =>
      (uri.token === undefined || label(info.label) === uri.token) &&
      (uri.serial === undefined || label(info.serialNumber) === uri.serial) &&
      (uri.manufacturer === undefined || label(info.manufacturerID) === uri.manufacturer) &&
      (uri.model === undefined || label(info.model) === uri.model) &&
      (uri.slotId === undefined || ulong(slot) === uri.slotId),
  );
  if (matching.length === 1) return matching[0].slot;
  const present = tokens.map(({ info }) => `"${label(info.label)}"`).filter((name) => name !== '""');
  if (matching.length === 0) return failToken(uri, present);
  throw new Error(`${matching.length} tokens match: add serial= to the URI`);
}

function failToken(uri: Pkcs11Uri, present: string[]): never {
  const wanted = uri.token !== undefined ? `labelled "${uri.token}"` : uri.serial !== undefined ? `with serial ${uri.serial}` : `in slot ${uri.slotId}`;
  throw new Error(`no token ${wanted} in ${uri.modulePath} (tokens there: ${present.join(', ') || 'none'})`);
}

function openSession(pkcs11: Pkcs11js.PKCS11, slot: Handle, pin: string): Handle {
  const { CKF_SERIAL_SESSION, CKU_USER, CKR_USER_ALREADY_LOGGED_IN } = pkcs11js();
  const session = pkcs11.C_OpenSession(slot, CKF_SERIAL_SESSION);
  try {
    pkcs11.C_Login(session, CKU_USER, pin);
  } catch (error) {
    // login is shared by every session of this process on the token: another signer may have done it
    if ((error as { code?: number }).code !== CKR_USER_ALREADY_LOGGED_IN) {
      closeQuietly(pkcs11, session);
      throw error;
    }
  }
  return session;
}

function findObjects(pkcs11: Pkcs11js.PKCS11, session: Handle, template: Pkcs11js.Template): Handle[] {
  pkcs11.C_FindObjectsInit(session, template);
  try {
    return pkcs11.C_FindObjects(session, 2);
  } finally {
    pkcs11.C_FindObjectsFinal(session);
  }
}

function findKey(pkcs11: Pkcs11js.PKCS11, session: Handle, uri: Pkcs11Uri): { privateKey: Handle; publicKey: Uint8Array } {
  const p = pkcs11js();
  const naming: Pkcs11js.Template = [];
  if (uri.object !== undefined) naming.push({ type: p.CKA_LABEL, value: uri.object });
  if (uri.id !== undefined) naming.push({ type: p.CKA_ID, value: Buffer.from(uri.id) });
  const what = uri.object !== undefined ? `labelled "${uri.object}"` : `with id ${Buffer.from(uri.id!).toString('hex')}`;

  const privateKeys = findObjects(pkcs11, session, [{ type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY }, ...naming]);
  if (privateKeys.length === 0) throw new Error(`no private key ${what} on the token`);
  if (privateKeys.length > 1) throw new Error(`more than one private key ${what}: add id= to the URI`);
  const [privateKey] = privateKeys;
  const [keyType, params, canSign, keyId] = pkcs11.C_GetAttributeValue(session, privateKey, [
    { type: p.CKA_KEY_TYPE },
    { type: p.CKA_EC_PARAMS },
    { type: p.CKA_SIGN },
    { type: p.CKA_ID },
  ]);
  if (ulong(keyType.value) !== p.CKK_EC || !params.value.equals(Buffer.from(SECP256K1_EC_PARAMS))) {
    throw new Error(`the key ${what} is not a secp256k1 key (CKA_EC_PARAMS ${params.value.toString('hex') || 'none'}, want ${Buffer.from(SECP256K1_EC_PARAMS).toString('hex')})`);
  }
  if (canSign.value[0] !== 1) throw new Error(`the key ${what} may not sign (CKA_SIGN is false)`);

  // the public half carries the point the address comes from; matched by the private key's id and label
  const publicNaming = keyId.value.length > 0 ? [...naming.filter((a) => a.type !== p.CKA_ID), { type: p.CKA_ID, value: keyId.value }] : naming;
  const publicKeys = findObjects(pkcs11, session, [{ type: p.CKA_CLASS, value: p.CKO_PUBLIC_KEY }, ...publicNaming]);
  if (publicKeys.length !== 1) throw new Error(`${publicKeys.length === 0 ? 'no' : 'more than one'} public key ${what} beside the private key (its CKA_EC_POINT gives the address)`);
  const [point] = pkcs11.C_GetAttributeValue(session, publicKeys[0], [{ type: p.CKA_EC_POINT }]);
  return { privateKey, publicKey: publicKeyFromEcPoint(point.value) };
}
