// PKCS#11 URIs (RFC 7512) naming a signing key: `pkcs11:token=relayers;object=relayer-1?module-path=
// /usr/lib/softhsm/libsofthsm2.so&pin-source=file:/run/secrets/hsm-pin`. Path attributes (`;`) pick the
// token and the key, query attributes (`&`) say how to reach them. Values are percent-encoded.

/** The RFC 7512 path attributes this signer matches tokens and keys by. */
const PATH_ATTRIBUTES = ['token', 'manufacturer', 'serial', 'model', 'slot-id', 'object', 'id', 'type'] as const;
/** Path attributes RFC 7512 defines that name a library or slot in a way we do not match on. */
const UNSUPPORTED_PATH = ['library-manufacturer', 'library-description', 'library-version', 'slot-manufacturer', 'slot-description'];
const QUERY_ATTRIBUTES = ['module-path', 'module-name', 'pin-source', 'pin-value', 'x-sessions'] as const;

/**
 * Sessions per signer unless the URI says `x-sessions=`: on SoftHSM, 50 signatures at once took a median
 * 47 ms on one session and 32 ms on two (no better on 4 or 8, 2 cores); a network HSM, where each signature
 * is a round trip, gains more from more sessions, and some HSMs have few sessions to share.
 */
const DEFAULT_PKCS11_SESSIONS = 2;

export interface Pkcs11Uri {
  /** Token label (CK_TOKEN_INFO.label). */
  token?: string;
  manufacturer?: string;
  serial?: string;
  model?: string;
  slotId?: number;
  /** Key label (CKA_LABEL). */
  object?: string;
  /** Key id (CKA_ID), bytes. */
  id?: Uint8Array;
  /** The PKCS#11 library to load. */
  modulePath: string;
  /** Where the user PIN is: a `file:` URI or an absolute path. */
  pinSource?: string;
  /** The PIN itself (tests; RFC 7512 advises against it elsewhere). */
  pinValue?: string;
  /** Sessions signing in parallel (vendor attribute `x-sessions`); default DEFAULT_PKCS11_SESSIONS. */
  sessions: number;
  /** `pkcs11:` and the path attributes: names the key with no PIN and no file path. */
  description: string;
}

/** A PKCS#11 URI this signer cannot use; the message names the problem, never a PIN. */
export class Pkcs11UriError extends Error {
  override readonly name = 'Pkcs11UriError';
}

function decode(value: string, attribute: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    throw new Pkcs11UriError(`the value of ${attribute} has a bad percent-encoding`);
  }
}

/** Percent-encodes what RFC 7512's pk11-pchar does not allow, for the description. */
function encode(value: string): string {
  return value.replace(/[^A-Za-z0-9\-._~:[\]@!$'()*+=]/g, (c) =>
    Array.from(Buffer.from(c, 'utf8'))
      .map((b) => '%' + b.toString(16).toUpperCase().padStart(2, '0'))
      .join(''),
  );
}

function attributes(text: string, separator: string, where: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of text.split(separator)) {
    if (part === '') continue;
    const equals = part.indexOf('=');
    // its text is not echoed: a mistyped `pin-value:1234` would print the PIN
    if (equals <= 0) throw new Pkcs11UriError(`a part of the ${where} is not attribute=value`);
    const name = part.slice(0, equals).toLowerCase();
    if (found.has(name)) throw new Pkcs11UriError(`${name} appears twice`);
    found.set(name, part.slice(equals + 1));
  }
  return found;
}

/** Parses a PKCS#11 URI naming one private key; throws Pkcs11UriError saying what is wrong or missing. */
export function parsePkcs11Uri(uri: string): Pkcs11Uri {
  if (!/^pkcs11:/i.test(uri)) throw new Pkcs11UriError('a PKCS#11 URI starts with pkcs11:');
  if (/[\s,]/.test(uri)) throw new Pkcs11UriError('a PKCS#11 URI has no space or comma: percent-encode them (%20, %2C)');
  const rest = uri.slice('pkcs11:'.length);
  const question = rest.indexOf('?');
  const path = attributes(question < 0 ? rest : rest.slice(0, question), ';', 'path');
  const query = attributes(question < 0 ? '' : rest.slice(question + 1), '&', 'query');

  for (const name of path.keys()) {
    if (UNSUPPORTED_PATH.includes(name)) throw new Pkcs11UriError(`the path attribute ${name} is not supported: pick the token by token, serial, manufacturer, model or slot-id`);
    if (!(PATH_ATTRIBUTES as readonly string[]).includes(name) && !name.startsWith('x-')) throw new Pkcs11UriError(`unknown path attribute ${name}`);
  }
  for (const name of query.keys()) {
    if (!(QUERY_ATTRIBUTES as readonly string[]).includes(name) && !name.startsWith('x-')) throw new Pkcs11UriError(`unknown query attribute ${name}`);
  }
  const value = (map: Map<string, string>, name: string) => (map.has(name) ? decode(map.get(name)!, name) : undefined);

  const type = value(path, 'type');
  if (type !== undefined && type !== 'private') throw new Pkcs11UriError(`type=${type}: a signer names a private key (type=private, or no type)`);
  const slotText = value(path, 'slot-id');
  if (slotText !== undefined && !/^\d+$/.test(slotText)) throw new Pkcs11UriError('slot-id is a decimal number');
  const id = path.has('id') ? Uint8Array.from(Buffer.from(decode(path.get('id')!, 'id'), 'latin1')) : undefined;
  const parsed = {
    token: value(path, 'token'),
    manufacturer: value(path, 'manufacturer'),
    serial: value(path, 'serial'),
    model: value(path, 'model'),
    slotId: slotText === undefined ? undefined : Number(slotText),
    object: value(path, 'object'),
    id,
  };
  if (parsed.token === undefined && parsed.serial === undefined && parsed.slotId === undefined) {
    throw new Pkcs11UriError('no token: name it with token=<label> (or serial=, slot-id=)');
  }
  if (parsed.object === undefined && id === undefined) throw new Pkcs11UriError('no key: name it with object=<label> (or id=)');

  const modulePath = value(query, 'module-path');
  if (!modulePath) {
    throw new Pkcs11UriError(
      query.has('module-name') ? 'module-name is not supported: give the library by module-path=<absolute path>' : 'no module-path=<absolute path of the PKCS#11 library>',
    );
  }
  if (!modulePath.startsWith('/')) throw new Pkcs11UriError('module-path must be an absolute path');
  const pinSource = value(query, 'pin-source');
  const pinValue = value(query, 'pin-value');
  if (pinSource === undefined && pinValue === undefined) throw new Pkcs11UriError('no PIN: add pin-source=file:<path> (or pin-value=, for tests)');
  if (pinSource !== undefined && pinValue !== undefined) throw new Pkcs11UriError('both pin-source and pin-value: give one');
  if (pinSource !== undefined && !pinSource.startsWith('file:') && !pinSource.startsWith('/')) {
    throw new Pkcs11UriError('pin-source must be a file (file:/path or /path); a command or a dialog is not supported');
  }
  const sessionsText = value(query, 'x-sessions') ?? String(DEFAULT_PKCS11_SESSIONS);
  if (!/^[1-9]\d*$/.test(sessionsText) || Number(sessionsText) > 64) throw new Pkcs11UriError('x-sessions is a number of sessions from 1 to 64');

  // the path attributes, in RFC 7512's order: the key's name without where its PIN or library is
  const described: string[] = [];
  for (const name of PATH_ATTRIBUTES) if (path.has(name)) described.push(`${name}=${name === 'id' ? path.get('id')! : encode(value(path, name)!)}`);
  return { ...parsed, modulePath, pinSource, pinValue, sessions: Number(sessionsText), description: `pkcs11:${described.join(';')}` };
}
