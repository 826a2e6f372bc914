import { Wallet } from 'ethers';
import { SignerError, SignerSpecError } from './signer-error';
import { createSigner, createSigners, parseSignerList, parseSignerSpec, redactSpec } from './signer-spec';

const ARN = 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const HSM = 'pkcs11:token=relayers;object=relayer-1?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/run/secrets/hsm-pin';
const privateKey = Wallet.createRandom().privateKey;

const specError = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SignerSpecError);
    expect((error as Error).message).not.toMatch(/[\r\n]/);
    return (error as Error).message;
  }
  throw new Error('no error');
};

describe('parseSignerSpec', () => {
  it('reads KMS keys by ARN, alias ARN, key id and alias', () => {
    expect(parseSignerSpec(`kms:${ARN}`)).toEqual({ backend: 'aws-kms', keyId: ARN });
    for (const keyId of ['arn:aws:kms:eu-west-1:111122223333:alias/relayer-1', '1234abcd-12ab-34cd-56ef-1234567890ab', 'alias/relayer-1', 'mrk-1234abcd12ab34cd56ef1234567890ab']) {
      expect(parseSignerSpec(`kms:${keyId}`)).toEqual({ backend: 'aws-kms', keyId });
    }
    expect(specError(() => parseSignerSpec('kms:arn:aws:s3:::bucket'))).toBe('kms:arn:aws:s3:::bucket: a KMS signer is kms: and a key ARN, an alias ARN, a key id or alias/<name>');
    expect(specError(() => parseSignerSpec('pkcs11:token=t?module-path=/l.so&pin-value=1'))).toBe('pkcs11:token=t?module-path=/l.so&pin-value=<PIN>: no key: name it with object=<label> (or id=)');
  });

  it('reads a PKCS#11 URI (RFC 7512): token, key label, library and PIN source', () => {
    const spec = parseSignerSpec(HSM);
    expect(spec).toMatchObject({
      backend: 'pkcs11',
      uri: { token: 'relayers', object: 'relayer-1', modulePath: '/usr/lib/softhsm/libsofthsm2.so', pinSource: 'file:/run/secrets/hsm-pin', sessions: 2, description: 'pkcs11:token=relayers;object=relayer-1' },
    });
  });

  it('decodes percent-encoded values and keeps them encoded in the description', () => {
    const spec = parseSignerSpec('pkcs11:token=Relayer%20HSM%2C%20EU;object=key%3B1;id=%01%02?module-path=/opt/hsm/lib%20pkcs11.so&pin-value=12%2634&x-sessions=4');
    expect(spec).toMatchObject({ backend: 'pkcs11', uri: { token: 'Relayer HSM, EU', object: 'key;1', modulePath: '/opt/hsm/lib pkcs11.so', pinValue: '12&34', sessions: 4 } });
    expect(spec.backend === 'pkcs11' && Array.from(spec.uri.id!)).toEqual([1, 2]);
    expect(spec.backend === 'pkcs11' && spec.uri.description).toBe('pkcs11:token=Relayer%20HSM%2C%20EU;object=key%3B1;id=%01%02');
  });

  it('says what a PKCS#11 URI lacks, never showing its PIN', () => {
    const cases: Array<[string, string]> = [
      ['pkcs11:object=k?module-path=/l.so&pin-value=1', 'no token'],
      ['pkcs11:token=t?module-path=/l.so&pin-value=1', 'no key'],
      ['pkcs11:token=t;object=k?pin-value=1', 'no module-path'],
      ['pkcs11:token=t;object=k?module-path=lib.so&pin-value=1', 'module-path must be an absolute path'],
      ['pkcs11:token=t;object=k?module-path=/l.so', 'no PIN'],
      ['pkcs11:token=t;object=k?module-path=/l.so&pin-source=|/bin/getpin', 'pin-source must be a file'],
      ['pkcs11:token=t;object=k;type=cert?module-path=/l.so&pin-value=1', 'type=cert'],
      ['pkcs11:token=t;object=k;slot-description=x?module-path=/l.so&pin-value=1', 'slot-description is not supported'],
      ['pkcs11:token=t;object=k;token=u?module-path=/l.so&pin-value=1', 'token appears twice'],
      ['pkcs11:token=t;object=k?module-path=/l.so&pin-value=%zz', 'bad percent-encoding'],
      ['pkcs11:token=t;object=k?module-path=/l.so&pin-value=1&x-sessions=0', 'x-sessions'],
    ];
    for (const [uri, problem] of cases) {
      const message = specError(() => parseSignerSpec(uri));
      expect({ uri, message: message.includes(problem) }).toEqual({ uri, message: true });
      expect(message).not.toContain('pin-value=1');
    }
  });

  it('reads a local key, and never echoes a private key in an error', () => {
    expect(parseSignerSpec(`local:${privateKey}`)).toEqual({ backend: 'local', privateKey });
    const short = privateKey.slice(0, 50);
    expect(specError(() => parseSignerSpec(`local:${short}`))).not.toContain(short.slice(2));
    const bare = specError(() => parseSignerSpec(privateKey));
    expect(bare).toBe('<64 hex digits>: a bare private key: write it local:0x<64 hex digits> (or keep keys in a KMS or an HSM)');
    expect(bare).not.toContain(privateKey.slice(2));
  });

  it('refuses an unknown scheme, naming the ones there are', () => {
    expect(specError(() => parseSignerSpec('vault:transit/keys/relayer'))).toBe('vault:transit/keys/relayer: not a signer: use kms:<key ARN>, pkcs11:<URI> or local:<private key>');
  });
});

describe('parseSignerList', () => {
  it('splits on commas and whitespace', () => {
    const specs = parseSignerList(` kms:${ARN},${HSM}\n  local:${privateKey} ,, `);
    expect(specs.map((spec) => spec.backend)).toEqual(['aws-kms', 'pkcs11', 'local']);
  });

  it('names the bad entry by its place and reminds that a comma inside a PKCS#11 URI is %2C', () => {
    const cut = 'pkcs11:token=Relayers,EU;object=relayer-1?module-path=/l.so&pin-value=1234';
    const message = specError(() => parseSignerList(`kms:${ARN},${cut}`, 'RELAYER_SIGNERS'));
    expect(message).toMatch(/^RELAYER_SIGNERS, entry 2 of 3 \(pkcs11:token=Relayers\): no key: .* \(.*a comma inside a PKCS#11 URI must be written %2C\)$/);
    const fragment = specError(() => parseSignerList(`kms:${ARN} object=relayer-1?module-path=/l.so&pin-value=1234`, 'RELAYER_SIGNERS'));
    expect(fragment).toContain('RELAYER_SIGNERS, entry 2 of 2 (object=relayer-1?module-path=/l.so&pin-value=<PIN>): not a signer');
    expect(fragment).toContain('a comma inside a PKCS#11 URI must be written %2C');
    expect(fragment).not.toContain('1234');
  });

  it('refuses an empty list', () => {
    expect(specError(() => parseSignerList(' , ', 'RELAYER_SIGNERS'))).toContain('RELAYER_SIGNERS names no signer');
  });
});

describe('redactSpec', () => {
  it('hides private keys and PINs', () => {
    expect(redactSpec(`local:${privateKey}`)).toBe('local:<private key>');
    expect(redactSpec('pkcs11:token=t;object=k?pin-value=secret&module-path=/l.so')).toBe('pkcs11:token=t;object=k?pin-value=<PIN>&module-path=/l.so');
    expect(redactSpec(`junk${privateKey.slice(2)}`)).toBe('junk<64 hex digits>');
  });
});

describe('createSigner', () => {
  it('opens a local signer from its spec', async () => {
    const wallet = new Wallet(privateKey);
    const signer = await createSigner(`local:${privateKey}`);
    expect(signer.address).toBe(wallet.address);
    expect(signer.description).toBe(`local:${wallet.address}`);
  });

  it('turns a bad spec into a SignerError without the secret', async () => {
    const error = await createSigner(`local:${privateKey.slice(0, 30)}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignerError);
    expect((error as Error).message).toBe('signer local:<private key>: a local signer is local:0x followed by the 64 hex digits of its private key');
  });

  it('needs a region for a KMS key not named by ARN, and an http(s) AWS_KMS_ENDPOINT', async () => {
    await expect(createSigner('kms:alias/relayer-1', {})).rejects.toThrow('signer kms:alias/relayer-1: no AWS region: name the key by its ARN, or set AWS_REGION');
    await expect(createSigner(`kms:${ARN}`, { AWS_KMS_ENDPOINT: 'localhost:4566' })).rejects.toThrow(`signer kms:${ARN}: AWS_KMS_ENDPOINT must be an http(s) URL`);
  });

  it('refuses a list naming one key twice', async () => {
    await expect(createSigners([`local:${privateKey}`, `local:${privateKey.toUpperCase().replace('0X', '0x')}`])).rejects.toThrow('is the same key as');
  });
});
