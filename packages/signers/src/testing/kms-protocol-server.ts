// A local stand-in for AWS KMS that speaks its real wire protocol (AWS JSON 1.1 over HTTP: POST /,
// `X-Amz-Target: TrentService.<Operation>`, base64 blobs, errors as `{"__type", "message"}` with HTTP 400),
// for the two operations a signer uses: GetPublicKey and Sign. Its keys are real secp256k1 keys, so what it
// signs verifies on chain; it refuses requests that are not SigV4-signed with its credentials, as KMS does.
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SigningKey, Wallet, computeAddress } from 'ethers';
import { derSignatureFromRs, spkiFromPublicKey } from '../der';
import { SECP256K1_N } from '../recoverable-signature';
import { verifySigv4, type Sigv4Credentials } from './sigv4-verifier';

export interface KmsKeyOptions {
  /** The key's id (the last part of its ARN); default a random UUID. */
  keyId?: string;
  /** Import this private key instead of making one. */
  privateKey?: string;
  /** An alias naming the key too (`alias/relayer-1`). */
  alias?: string;
  /** What GetPublicKey reports; default ECC_SECG_P256K1 and SIGN_VERIFY (other values test a signer's checks). */
  keySpec?: string;
  keyUsage?: string;
}

export interface KmsTestKey {
  keyId: string;
  arn: string;
  /** The Ethereum address of the key. */
  address: string;
}

export type KmsOperation = 'GetPublicKey' | 'Sign';

export interface KmsCall {
  operation: string;
  /** The KeyId as the request named it. */
  keyId: string | undefined;
}

export interface KmsProtocolServer {
  /** `http://127.0.0.1:<port>`: the endpoint for the KMS client (`AWS_KMS_ENDPOINT`). */
  readonly endpoint: string;
  readonly region: string;
  readonly account: string;
  /** The only credentials it accepts (random per server); sign with them (`AWS_ACCESS_KEY_ID`, …). */
  readonly credentials: Sigv4Credentials;
  /** Environment for `createSigner(spec, env)`: endpoint, region and credentials. */
  readonly env: Record<string, string>;
  createKey(options?: KmsKeyOptions): KmsTestKey;
  /** Every request answered or refused, in order. */
  readonly calls: readonly KmsCall[];
  callCount(operation: KmsOperation, keyId?: string): number;
  /** From now on, every request for this key fails with this KMS error (`DisabledException`, …); undefined heals it. */
  failKey(keyId: string, errorType: string | undefined, message?: string): void;
  /** From now on Sign uses another private key than the one GetPublicKey reports (a key that is not the one we think). */
  signWithOtherKey(keyId: string): void;
  close(): Promise<void>;
}

interface Key {
  keyId: string;
  arn: string;
  alias?: string;
  signingKey: SigningKey;
  publicKey: Uint8Array;
  keySpec: string;
  keyUsage: string;
  failure?: { type: string; message: string };
  signs: number;
}

class KmsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const CONTENT_TYPE = 'application/x-amz-json-1.1';

/** Starts the server on a free loopback port. */
export async function startKmsProtocolServer(options: { region?: string; account?: string } = {}): Promise<KmsProtocolServer> {
  const region = options.region ?? 'us-east-1';
  const account = options.account ?? '111122223333';
  const credentials: Sigv4Credentials = { accessKeyId: 'AKIA' + randomBytes(8).toString('hex').toUpperCase(), secretAccessKey: randomBytes(30).toString('base64') };
  const keys = new Map<string, Key>();
  const calls: KmsCall[] = [];

  const findKey = (keyId: unknown): Key => {
    if (typeof keyId !== 'string' || keyId === '') throw new KmsError('ValidationException', "1 validation error detected: Value null at 'keyId' failed to satisfy constraint: Member must not be null");
    const key = [...keys.values()].find((k) => k.keyId === keyId || k.arn === keyId || (k.alias && (k.alias === keyId || `arn:aws:kms:${region}:${account}:${k.alias}` === keyId)));
    if (!key) throw new KmsError('NotFoundException', `Key '${keyId.startsWith('arn:') ? keyId : `arn:aws:kms:${region}:${account}:key/${keyId}`}' does not exist`);
    if (key.failure) throw new KmsError(key.failure.type, key.failure.message);
    return key;
  };

  const operations: Record<string, (body: Record<string, unknown>) => Record<string, unknown>> = {
    GetPublicKey(body) {
      const key = findKey(body.KeyId);
      return {
        KeyId: key.arn,
        PublicKey: Buffer.from(spkiFromPublicKey(key.publicKey)).toString('base64'),
        CustomerMasterKeySpec: key.keySpec,
        KeySpec: key.keySpec,
        KeyUsage: key.keyUsage,
        SigningAlgorithms: ['ECDSA_SHA_256'],
      };
    },
    Sign(body) {
      const key = findKey(body.KeyId);
      if (key.keyUsage !== 'SIGN_VERIFY') throw new KmsError('InvalidKeyUsageException', `${key.arn} key usage is ${key.keyUsage} which is not valid for Sign.`);
      if (body.SigningAlgorithm !== 'ECDSA_SHA_256') throw new KmsError('InvalidKeyUsageException', `Algorithm ${String(body.SigningAlgorithm)} is incompatible with key spec ${key.keySpec}.`);
      if (typeof body.Message !== 'string') throw new KmsError('ValidationException', "1 validation error detected: Value null at 'message' failed to satisfy constraint: Member must not be null");
      const message = Buffer.from(body.Message, 'base64');
      if (body.MessageType !== 'DIGEST') throw new KmsError('ValidationException', 'This test server signs only MessageType DIGEST (a signer must never let KMS hash for it).');
      if (message.length !== 32) throw new KmsError('ValidationException', 'Digest is invalid length for algorithm ECDSA_SHA_256.');
      const signature = key.signingKey.sign(message);
      // KMS does not normalise s: every other signature is given in its high form, as a real one may be
      const s = key.signs++ % 2 === 1 ? SECP256K1_N - BigInt(signature.s) : BigInt(signature.s);
      return { KeyId: key.arn, Signature: Buffer.from(derSignatureFromRs(BigInt(signature.r), s)).toString('base64'), SigningAlgorithm: 'ECDSA_SHA_256' };
    },
  };

  const answer = (response: ServerResponse, status: number, body: unknown) => {
    const json = JSON.stringify(body);
    response.writeHead(status, { 'Content-Type': CONTENT_TYPE, 'Content-Length': Buffer.byteLength(json), 'x-amzn-RequestId': randomUUID() });
    response.end(json);
  };

  const handle = (request: IncomingMessage, response: ServerResponse, body: Buffer) => {
    const target = String(request.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('TrentService.') ? target.slice('TrentService.'.length) : target;
    let parsed: Record<string, unknown> = {};
    try {
      parsed = body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
    } catch {
      // refused below, once the call is counted
    }
    calls.push({ operation, keyId: typeof parsed.KeyId === 'string' ? parsed.KeyId : undefined });
    const refusal = verifySigv4({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body }, [credentials], region, 'kms');
    if (refusal) return answer(response, 400, { __type: refusal.type, message: refusal.message });
    if (request.method !== 'POST' || request.url !== '/') return answer(response, 404, { __type: 'UnknownOperationException', message: `${request.method} ${request.url}` });
    if (!String(request.headers['content-type'] ?? '').startsWith(CONTENT_TYPE)) return answer(response, 400, { __type: 'SerializationException', message: `Content-Type must be ${CONTENT_TYPE}` });
    const run = operations[operation];
    if (!run || !target.startsWith('TrentService.')) return answer(response, 400, { __type: 'UnknownOperationException', message: `unknown operation ${target}` });
    try {
      answer(response, 200, run(parsed));
    } catch (error) {
      if (error instanceof KmsError) return answer(response, 400, { __type: error.type, message: error.message });
      answer(response, 500, { __type: 'KMSInternalException', message: String(error) });
    }
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handle(request, response, Buffer.concat(chunks)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    endpoint,
    region,
    account,
    credentials,
    env: { AWS_KMS_ENDPOINT: endpoint, AWS_REGION: region, AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey },
    calls,
    createKey(keyOptions = {}) {
      const keyId = keyOptions.keyId ?? randomUUID();
      const signingKey = new SigningKey(keyOptions.privateKey ?? Wallet.createRandom().privateKey);
      const arn = `arn:aws:kms:${region}:${account}:key/${keyId}`;
      const publicKey = Uint8Array.from(Buffer.from(signingKey.publicKey.slice(2), 'hex'));
      keys.set(keyId, {
        keyId,
        arn,
        alias: keyOptions.alias,
        signingKey,
        publicKey,
        keySpec: keyOptions.keySpec ?? 'ECC_SECG_P256K1',
        keyUsage: keyOptions.keyUsage ?? 'SIGN_VERIFY',
        signs: 0,
      });
      return { keyId, arn, address: computeAddress(signingKey.publicKey) };
    },
    callCount(operation, keyId) {
      return calls.filter((call) => call.operation === operation && (keyId === undefined || call.keyId === keyId || call.keyId?.endsWith(`/${keyId}`))).length;
    },
    failKey(keyId, errorType, message) {
      const key = keys.get(keyId);
      if (!key) throw new Error(`no test key ${keyId}`);
      key.failure = errorType ? { type: errorType, message: message ?? (errorType === 'DisabledException' ? `${key.arn} is disabled.` : `${errorType} for ${key.arn}`) } : undefined;
    },
    signWithOtherKey(keyId) {
      const key = keys.get(keyId);
      if (!key) throw new Error(`no test key ${keyId}`);
      key.signingKey = new SigningKey(Wallet.createRandom().privateKey);
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
