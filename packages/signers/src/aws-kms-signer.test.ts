// AWS KMS cannot run here: the signer talks through the real @aws-sdk/client-kms to a local server that
// speaks KMS's JSON protocol, checks SigV4 and signs with real secp256k1 keys (testing/kms-protocol-server).
import { Wallet, randomBytes } from 'ethers';
import { signerContract, startKmsProtocolServer, type KmsProtocolServer } from '@facilitator/signers/testing';
import { AwsKmsSigner } from './aws-kms-signer';
import { checkSigner } from './check-signer';
import { createSigner } from './signer-spec';
import { SignerError } from './signer-error';

let kms: KmsProtocolServer;
beforeAll(async () => {
  kms = await startKmsProtocolServer();
});
afterAll(async () => {
  await kms?.close();
});

signerContract('AwsKmsSigner (KMS protocol server)', async () => {
  const key = kms.createKey();
  const signer = await createSigner(`kms:${key.arn}`, kms.env);
  return { signer, expectedAddress: key.address, secrets: [kms.credentials.secretAccessKey] };
});

const expectOneLine = async (promise: Promise<unknown>, ...parts: string[]) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SignerError);
  const message = (error as Error).message;
  expect(message).not.toMatch(/[\r\n]/);
  for (const part of parts) expect(message).toContain(part);
  expect(message).not.toContain(kms.credentials.secretAccessKey);
  return message;
};

describe('AwsKmsSigner', () => {
  it('reads the public key once, then makes one Sign call per signature with MessageType DIGEST', async () => {
    const key = kms.createKey();
    const signer = await AwsKmsSigner.create({ keyId: key.arn, endpoint: kms.endpoint, credentials: kms.credentials });
    expect(signer.address).toBe(key.address);
    expect(signer.description).toBe(`kms:${key.arn}`);
    for (let i = 0; i < 5; i++) await signer.signDigest(randomBytes(32));
    expect(kms.callCount('GetPublicKey', key.keyId)).toBe(1);
    expect(kms.callCount('Sign', key.keyId)).toBe(5);
    await signer.close();
  });

  it('finds a key by bare id or alias with the region from AWS_REGION', async () => {
    const key = kms.createKey({ alias: 'alias/relayer-7' });
    for (const id of [key.keyId, 'alias/relayer-7']) {
      const signer = await createSigner(`kms:${id}`, kms.env);
      expect(signer.address).toBe(key.address);
      await signer.close();
    }
    await expectOneLine(createSigner(`kms:${key.keyId}`, { ...kms.env, AWS_REGION: '' }), `kms:${key.keyId}`, 'no AWS region');
  });

  it('imports a known private key (the same address as the local wallet)', async () => {
    const wallet = Wallet.createRandom();
    const key = kms.createKey({ privateKey: wallet.privateKey });
    expect(key.address).toBe(wallet.address);
    const signer = await createSigner(`kms:${key.arn}`, kms.env);
    expect(signer.address).toBe(wallet.address);
    await signer.close();
  });

  it('an unknown key stops with one line naming it', async () => {
    const arn = `arn:aws:kms:us-east-1:111122223333:key/${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}`;
    await expectOneLine(createSigner(`kms:${arn}`, kms.env), `signer kms:${arn}: KMS GetPublicKey failed: NotFoundException`, 'does not exist');
  });

  it('a key that is not secp256k1, or not for signing, is refused', async () => {
    const p256 = kms.createKey({ keySpec: 'ECC_NIST_P256' });
    await expectOneLine(createSigner(`kms:${p256.arn}`, kms.env), p256.arn, 'ECC_NIST_P256, not ECC_SECG_P256K1');
    const encrypting = kms.createKey({ keyUsage: 'ENCRYPT_DECRYPT' });
    await expectOneLine(createSigner(`kms:${encrypting.arn}`, kms.env), encrypting.arn, 'ENCRYPT_DECRYPT, not SIGN_VERIFY');
  });

  it('a disabled key fails its check with one line naming it, and signs again once enabled', async () => {
    const key = kms.createKey();
    const signer = await createSigner(`kms:${key.arn}`, kms.env);
    kms.failKey(key.keyId, 'DisabledException');
    await expectOneLine(checkSigner(signer), `signer kms:${key.arn}: KMS Sign failed: DisabledException: ${key.arn} is disabled.`);
    kms.failKey(key.keyId, undefined);
    await expect(checkSigner(signer)).resolves.toBeUndefined();
    await signer.close();
  });

  it('a key whose signatures do not recover to its public key is refused (never a wrong v)', async () => {
    const key = kms.createKey();
    const signer = await createSigner(`kms:${key.arn}`, kms.env);
    kms.signWithOtherKey(key.keyId);
    await expectOneLine(checkSigner(signer), `signer kms:${key.arn}`, 'neither v = 27 nor v = 28');
    await signer.close();
  });

  it('wrong credentials are refused by the server, as by KMS', async () => {
    const key = kms.createKey();
    const wrongSecret = { ...kms.env, AWS_SECRET_ACCESS_KEY: 'not-the-secret' };
    await expectOneLine(createSigner(`kms:${key.arn}`, wrongSecret), key.arn, 'InvalidSignatureException');
    const unknownKey = { ...kms.env, AWS_ACCESS_KEY_ID: 'AKIAUNKNOWN' };
    await expectOneLine(createSigner(`kms:${key.arn}`, unknownKey), key.arn, 'UnrecognizedClientException');
  });

  it('the server refuses a request without a SigV4 signature, in KMS error shape', async () => {
    const key = kms.createKey();
    const response = await fetch(kms.endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-amz-json-1.1', 'X-Amz-Target': 'TrentService.GetPublicKey' },
      body: JSON.stringify({ KeyId: key.arn }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ __type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' });
  });

  it('a KMS that does not answer fails with one line naming the key', async () => {
    const down = await startKmsProtocolServer();
    const key = down.createKey();
    const env = down.env;
    await down.close();
    await expectOneLine(createSigner(`kms:${key.arn}`, env), `signer kms:${key.arn}: KMS GetPublicKey failed`, 'ECONNREFUSED');
  });

  it('a KMS that goes down after start-up fails each signature with one line naming the key', async () => {
    const server = await startKmsProtocolServer();
    const key = server.createKey();
    const signer = await AwsKmsSigner.create({ keyId: key.arn, endpoint: server.endpoint, credentials: server.credentials });
    await server.close();
    // the first attempt may meet the kept-alive connection's reset; the SDK's retry then finds nobody listening
    await expectOneLine(signer.signDigest(randomBytes(32)), `signer kms:${key.arn}: KMS Sign failed`, 'ECONNREFUSED');
    await signer.close();
  });
});
