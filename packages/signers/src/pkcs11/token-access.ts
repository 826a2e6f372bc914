import type * as Pkcs11js from 'pkcs11js';
import { pkcs11js } from './pkcs11-module';
import type { Pkcs11Uri } from './pkcs11-uri';

// What every key on a PKCS#11 token needs, whatever its curve: the token found by the URI, sessions logged
// in, the key pair found by label or id, and the words an operator reads when one of them fails.

export type Handle = Pkcs11js.Handle;

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

/** A PKCS#11 failure in words: the method, and the return value's meaning where it is the operator's to fix. */
export function pkcs11Reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const name = /CKR_[A-Z_]+/.exec(message)?.[0];
  const method = (error as { method?: string }).method;
  const words = name && WORDS[name] ? `${WORDS[name]} (${name})` : message;
  return method ? `${method}: ${words}` : words;
}

/** Whether a failure means the session is gone (the token restarted): a new session may succeed. */
export const isSessionLost = (error: unknown) => SESSION_LOST.some((code) => error instanceof Error && error.message.includes(code));

/** A token's fixed-width label, without its padding. */
export const label = (text: string) => text.replace(/[\s\0]+$/, '');

/** Closes a session, ignoring a token that is already gone. */
export function closeQuietly(pkcs11: Pkcs11js.PKCS11, session: Handle): void {
  try {
    pkcs11.C_CloseSession(session);
  } catch {
    // already gone with the token
  }
}

/** A CK_ULONG (a slot id, a key type) as pkcs11js returns it: the native-endian bytes of an unsigned long. */
export function ulong(bytes: Buffer): number {
  return bytes.length === 8 ? Number(bytes.readBigUInt64LE(0)) : bytes.readUIntLE(0, bytes.length);
}

/** The one token the URI names (by label, serial, manufacturer, model or slot). */
export function findSlot(pkcs11: Pkcs11js.PKCS11, uri: Pkcs11Uri): Handle {
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

/** A session on the slot, logged in as the user (a login another signer made is shared). */
export function openSession(pkcs11: Pkcs11js.PKCS11, slot: Handle, pin: string): Handle {
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

/** A key pair found by the URI: the private key's handle and its public half's CKA_EC_POINT. */
export interface FoundKeyPair {
  privateKey: Handle;
  ecPoint: Uint8Array;
}

/**
 * The key pair the URI names: one private key by label or id that may sign, of `keyType` with CKA_EC_PARAMS
 * one of `ecParams` (checked, so a key of another curve is never used), and its public half, matched by id.
 */
export function findKeyPair(pkcs11: Pkcs11js.PKCS11, session: Handle, uri: Pkcs11Uri, curve: { name: string; keyType: number; ecParams: readonly Uint8Array[] }): FoundKeyPair {
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
  if (ulong(keyType.value) !== curve.keyType || !curve.ecParams.some((expected) => params.value.equals(Buffer.from(expected)))) {
    throw new Error(`the key ${what} is not a ${curve.name} key (CKA_EC_PARAMS ${params.value.toString('hex') || 'none'}, want ${Buffer.from(curve.ecParams[0]).toString('hex')})`);
  }
  if (canSign.value[0] !== 1) throw new Error(`the key ${what} may not sign (CKA_SIGN is false)`);

  // the public half carries the point the address comes from; matched by the private key's id and label
  const publicNaming = keyId.value.length > 0 ? [...naming.filter((a) => a.type !== p.CKA_ID), { type: p.CKA_ID, value: keyId.value }] : naming;
  const publicKeys = findObjects(pkcs11, session, [{ type: p.CKA_CLASS, value: p.CKO_PUBLIC_KEY }, ...publicNaming]);
  if (publicKeys.length !== 1) throw new Error(`${publicKeys.length === 0 ? 'no' : 'more than one'} public key ${what} beside the private key (its CKA_EC_POINT gives the address)`);
  const [point] = pkcs11.C_GetAttributeValue(session, publicKeys[0], [{ type: p.CKA_EC_POINT }]);
  return { privateKey, ecPoint: point.value };
}
