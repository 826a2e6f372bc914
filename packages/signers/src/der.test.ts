import { SigningKey, Wallet, getBytes } from 'ethers';
import { SECP256K1_EC_PARAMS, derSignatureFromRs, publicKeyFromEcPoint, publicKeyFromSpki, rsFromDerSignature, spkiFromPublicKey } from './der';

const key = new SigningKey(Wallet.createRandom().privateKey);
const point = getBytes(key.publicKey);

describe('DER', () => {
  it('reads the point of a secp256k1 SubjectPublicKeyInfo, byte for byte the RFC 5480 layout', () => {
    const spki = spkiFromPublicKey(point);
    // SEQUENCE { SEQUENCE { id-ecPublicKey, secp256k1 }, BIT STRING 0x00 ‖ point }: 88 bytes for a 65-byte point
    expect(Buffer.from(spki.subarray(0, 23)).toString('hex')).toBe('3056301006072a8648ce3d020106052b8104000a034200');
    expect(spki).toHaveLength(88);
    expect(publicKeyFromSpki(spki)).toEqual(point);
  });

  it('refuses a key on another curve, a trailing byte and a truncated key', () => {
    const p384 = Buffer.from(spkiFromPublicKey(point));
    // the curve's OID content starts at byte 15; put P-384's (1.3.132.0.34, as long as secp256k1's) there
    p384.set([0x2b, 0x81, 0x04, 0x00, 0x22], 15);
    expect(() => publicKeyFromSpki(p384)).toThrow('the curve is not secp256k1');
    expect(() => publicKeyFromSpki(Uint8Array.from([...spkiFromPublicKey(point), 0]))).toThrow('bytes after the DER value');
    expect(() => publicKeyFromSpki(spkiFromPublicKey(point).subarray(0, 60))).toThrow(/DER length runs past the end/);
  });

  it('round-trips (r, s) through an ECDSA-Sig-Value, with the leading zero a high bit needs', () => {
    for (const [r, s] of [
      [1n, 2n],
      [0x80n, 0x7fn],
      [2n ** 255n + 7n, 2n ** 256n - 5n],
    ]) {
      expect(rsFromDerSignature(derSignatureFromRs(r, s))).toEqual({ r, s });
    }
    expect(Buffer.from(derSignatureFromRs(0x80n, 1n)).toString('hex')).toBe('3007020200800201' + '01');
  });

  it('refuses a negative or padded integer in a signature', () => {
    expect(() => rsFromDerSignature(Uint8Array.from([0x30, 0x06, 0x02, 0x01, 0x80, 0x02, 0x01, 0x01]))).toThrow('negative');
    expect(() => rsFromDerSignature(Uint8Array.from([0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x01]))).toThrow('shortest form');
  });

  it('reads a CKA_EC_POINT as an OCTET STRING around the point, or the bare point', () => {
    expect(publicKeyFromEcPoint(Uint8Array.from([0x04, 0x41, ...point]))).toEqual(point);
    expect(publicKeyFromEcPoint(point)).toEqual(point);
    expect(() => publicKeyFromEcPoint(Uint8Array.from([0x04, 0x21, 0x02, ...point.subarray(1, 33)]))).toThrow('not an uncompressed secp256k1 point');
  });

  it('names secp256k1 for CKA_EC_PARAMS as PKCS#11 expects it', () => {
    expect(Buffer.from(SECP256K1_EC_PARAMS).toString('hex')).toBe('06052b8104000a');
  });
});
