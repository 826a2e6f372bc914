// The few DER (X.690) structures a KMS or an HSM hands back for a secp256k1 or Ed25519 key: a SubjectPublicKeyInfo
// (RFC 5480), an ECDSA-Sig-Value (RFC 3279) and an OCTET STRING around an EC point (PKCS#11 CKA_EC_POINT).
// Parsed strictly: a wrong tag, length or trailing byte is an error, never a misread key.

const TAG_INTEGER = 0x02;
const TAG_BIT_STRING = 0x03;
const TAG_OCTET_STRING = 0x04;
const TAG_OID = 0x06;
const TAG_SEQUENCE = 0x30;

/** DER of the OID 1.2.840.10045.2.1 (id-ecPublicKey), content bytes only. */
const OID_EC_PUBLIC_KEY = Uint8Array.from([0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]);
/** DER of the OID 1.3.132.0.10 (secp256k1), content bytes only. */
const OID_SECP256K1 = Uint8Array.from([0x2b, 0x81, 0x04, 0x00, 0x0a]);
/** The full DER of the secp256k1 OID: PKCS#11's CKA_EC_PARAMS for the curve. */
export const SECP256K1_EC_PARAMS = Uint8Array.from([TAG_OID, OID_SECP256K1.length, ...OID_SECP256K1]);
/** DER of the OID 1.3.101.112 (id-Ed25519, RFC 8410): CKA_EC_PARAMS of Ed25519 keys, as `pkcs11-tool` makes them. */
export const ED25519_EC_PARAMS = Uint8Array.from([TAG_OID, 0x03, 0x2b, 0x65, 0x70]);
/** PrintableString "edwards25519": the other CKA_EC_PARAMS PKCS#11 3.0 allows for the curve. */
export const ED25519_EC_PARAMS_BY_NAME = Uint8Array.from([0x13, 0x0c, ...Buffer.from('edwards25519', 'ascii')]);

interface Element {
  tag: number;
  content: Uint8Array;
  /** The offset just past the element. */
  end: number;
}

function readElement(bytes: Uint8Array, offset: number, what: string): Element {
  if (offset + 2 > bytes.length) throw new Error(`${what}: DER ends early`);
  const tag = bytes[offset];
  let length = bytes[offset + 1];
  let start = offset + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    if (octets === 0 || octets > 3 || start + octets > bytes.length) throw new Error(`${what}: bad DER length`);
    length = 0;
    for (let i = 0; i < octets; i++) length = (length << 8) | bytes[start + i];
    start += octets;
    if (length < 0x80) throw new Error(`${what}: DER length not in its shortest form`);
  }
  const end = start + length;
  if (end > bytes.length) throw new Error(`${what}: DER length runs past the end`);
  return { tag, content: bytes.subarray(start, end), end };
}

function readWhole(bytes: Uint8Array, tag: number, what: string): Uint8Array {
  const element = readElement(bytes, 0, what);
  if (element.tag !== tag) throw new Error(`${what}: expected DER tag 0x${tag.toString(16)}, found 0x${element.tag.toString(16)}`);
  if (element.end !== bytes.length) throw new Error(`${what}: bytes after the DER value`);
  return element.content;
}

/** The elements of a SEQUENCE's content, each checked against its expected tag. */
function readSequence(content: Uint8Array, tags: number[], what: string): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let offset = 0;
  for (const tag of tags) {
    const element = readElement(content, offset, what);
    if (element.tag !== tag) throw new Error(`${what}: expected DER tag 0x${tag.toString(16)}, found 0x${element.tag.toString(16)}`);
    parts.push(element.content);
    offset = element.end;
  }
  if (offset !== content.length) throw new Error(`${what}: unexpected elements in the DER sequence`);
  return parts;
}

const equal = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);

function uncompressedPoint(point: Uint8Array, what: string): Uint8Array {
  if (point.length !== 65 || point[0] !== 0x04) throw new Error(`${what}: not an uncompressed secp256k1 point (65 bytes starting 04)`);
  return point;
}

/** The uncompressed public key (65 bytes, 04‖x‖y) of a DER SubjectPublicKeyInfo holding a secp256k1 key. */
export function publicKeyFromSpki(spki: Uint8Array): Uint8Array {
  const what = 'public key';
  const [algorithm, bitString] = readSequence(readWhole(spki, TAG_SEQUENCE, what), [TAG_SEQUENCE, TAG_BIT_STRING], what);
  const [keyType, curve] = readSequence(algorithm, [TAG_OID, TAG_OID], what);
  if (!equal(keyType, OID_EC_PUBLIC_KEY)) throw new Error(`${what}: not an elliptic-curve key`);
  if (!equal(curve, OID_SECP256K1)) throw new Error(`${what}: the curve is not secp256k1`);
  if (bitString[0] !== 0) throw new Error(`${what}: the key's bit string has unused bits`);
  return uncompressedPoint(bitString.subarray(1), what);
}

/** A secp256k1 public key (65 bytes, 04‖x‖y) as a DER SubjectPublicKeyInfo, as KMS's GetPublicKey returns it. */
export function spkiFromPublicKey(publicKey: Uint8Array): Uint8Array {
  const point = uncompressedPoint(publicKey, 'public key');
  const algorithm = encode(TAG_SEQUENCE, concat(encode(TAG_OID, OID_EC_PUBLIC_KEY), encode(TAG_OID, OID_SECP256K1)));
  return encode(TAG_SEQUENCE, concat(algorithm, encode(TAG_BIT_STRING, concat(Uint8Array.of(0), point))));
}

/** (r, s) of a DER ECDSA-Sig-Value, as KMS's Sign returns it. */
export function rsFromDerSignature(der: Uint8Array): { r: bigint; s: bigint } {
  const what = 'signature';
  const [r, s] = readSequence(readWhole(der, TAG_SEQUENCE, what), [TAG_INTEGER, TAG_INTEGER], what);
  return { r: positiveInteger(r, what), s: positiveInteger(s, what) };
}

/** (r, s) as a DER ECDSA-Sig-Value. */
export function derSignatureFromRs(r: bigint, s: bigint): Uint8Array {
  return encode(TAG_SEQUENCE, concat(encode(TAG_INTEGER, integerContent(r)), encode(TAG_INTEGER, integerContent(s))));
}

/**
 * The uncompressed point of a PKCS#11 CKA_EC_POINT: a DER OCTET STRING around it (PKCS#11 2.40 and
 * SoftHSM); a few modules return the bare point, which is taken as it is.
 */
export function publicKeyFromEcPoint(ecPoint: Uint8Array): Uint8Array {
  if (ecPoint.length === 65 && ecPoint[0] === 0x04) return ecPoint;
  return uncompressedPoint(readWhole(ecPoint, TAG_OCTET_STRING, 'CKA_EC_POINT'), 'CKA_EC_POINT');
}

function positiveInteger(content: Uint8Array, what: string): bigint {
  if (content.length === 0 || content[0] & 0x80) throw new Error(`${what}: a negative or empty DER integer`);
  if (content.length > 1 && content[0] === 0 && !(content[1] & 0x80)) throw new Error(`${what}: a DER integer not in its shortest form`);
  return BigInt('0x' + Buffer.from(content).toString('hex'));
}

function integerContent(value: bigint): Uint8Array {
  let hex = value.toString(16);
  if (hex.length % 2) hex = '0' + hex;
  // a leading 0 keeps a high first bit from reading as negative
  if (parseInt(hex.slice(0, 2), 16) & 0x80) hex = '00' + hex;
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

function encode(tag: number, content: Uint8Array): Uint8Array {
  const length = content.length;
  const header = length < 0x80 ? [tag, length] : length < 0x100 ? [tag, 0x81, length] : [tag, 0x82, length >> 8, length & 0xff];
  return concat(Uint8Array.from(header), content);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(Buffer.concat(parts));
}

/** The 32-byte Ed25519 public key of a CKA_EC_POINT: a DER OCTET STRING around it, or the bare 32 bytes. */
export function ed25519PublicKeyFromEcPoint(ecPoint: Uint8Array): Uint8Array {
  const point = ecPoint.length === 32 ? ecPoint : readWhole(ecPoint, TAG_OCTET_STRING, 'CKA_EC_POINT');
  if (point.length !== 32) throw new Error(`CKA_EC_POINT: an Ed25519 public key is 32 bytes, not ${point.length}`);
  return point;
}
