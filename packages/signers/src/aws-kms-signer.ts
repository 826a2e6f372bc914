import { GetPublicKeyCommand, KMSClient, SignCommand, type KMSClientConfig } from '@aws-sdk/client-kms';
import { computeAddress, hexlify, type Signature } from 'ethers';
import { publicKeyFromSpki, rsFromDerSignature } from './der';
import { recoverableSignature } from './recoverable-signature';
import type { Signer } from './signer';
import { SignerError, oneLine, signerErrorOf } from './signer-error';

interface AwsKmsSignerOptions {
  /** Key ARN, alias ARN, key id or `alias/…`. */
  keyId: string;
  /** Default: the ARN's region. */
  region?: string;
  /** Another endpoint than AWS's (a VPC endpoint, a test server). */
  endpoint?: string;
  /** Default: the AWS SDK's provider chain (environment, profile, container or instance role). */
  credentials?: KMSClientConfig['credentials'];
  /** Attempts per request, retries included (the SDK's default 3). */
  maxAttempts?: number;
  /** Milliseconds to connect and to wait for an answer; default 3,000 and 10,000 (the SDK's own default waits forever). */
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
}

const KMS_ARN = /^arn:aws[a-z-]*:kms:([a-z0-9-]+):\d{12}:(key|alias)\/.+$/;

/** The region of a KMS key or alias ARN; undefined for a bare key id or alias. */
export function regionOfKmsArn(keyId: string): string | undefined {
  return KMS_ARN.exec(keyId)?.[1];
}

/** The name and words of an AWS SDK error (`NotFoundException: Key '…' does not exist`), on one line. */
function awsReason(error: unknown): string {
  if (!(error instanceof Error)) return oneLine(String(error));
  // the SDK wraps a network failure that is not an Error of its own in an error saying so: the cause is enough
  const message = error.message.replace(/^AWS SDK error wrapper for /, '');
  const code = (error as { code?: unknown }).code;
  const name = error.name !== 'Error' ? error.name : typeof code === 'string' ? code : '';
  return oneLine(name && !message.includes(name) ? `${name}: ${message}` : message || name);
}

/**
 * A secp256k1 key in AWS KMS (key spec ECC_SECG_P256K1, usage SIGN_VERIFY): the private key never leaves
 * KMS. `create` reads the public key once and derives the address; each signature is one `kms:Sign` of the
 * digest, DER (r, s) turned into Ethereum's low-s signature with v found by recovery.
 */
export class AwsKmsSigner implements Signer {
  readonly backend = 'aws-kms' as const;
  private closed = false;

  // JavaScript-private: the client's configuration holds credentials, kept out of inspection and logs
  readonly #client: KMSClient;
  readonly #keyId: string;

  private constructor(
    client: KMSClient,
    keyId: string,
    readonly address: string,
    readonly description: string,
  ) {
    this.#client = client;
    this.#keyId = keyId;
  }

  static async create(options: AwsKmsSignerOptions): Promise<AwsKmsSigner> {
    const description = `kms:${options.keyId}`;
    const region = options.region ?? regionOfKmsArn(options.keyId);
    if (!region) throw new SignerError(description, 'no AWS region: name the key by its ARN, or set AWS_REGION');
    let client: KMSClient;
    try {
      client = new KMSClient({
        region,
        endpoint: options.endpoint,
        credentials: options.credentials,
        maxAttempts: options.maxAttempts,
        requestHandler: { connectionTimeout: options.connectionTimeoutMs ?? 3_000, requestTimeout: options.requestTimeoutMs ?? 10_000 },
      });
    } catch (error) {
      throw signerErrorOf(description, error, 'KMS client');
    }
    try {
      const answer = await client.send(new GetPublicKeyCommand({ KeyId: options.keyId })).catch((error: unknown) => {
        throw new SignerError(description, `KMS GetPublicKey failed: ${awsReason(error)}`, { cause: error });
      });
      if (answer.KeySpec !== 'ECC_SECG_P256K1') throw new SignerError(description, `the key's spec is ${answer.KeySpec}, not ECC_SECG_P256K1 (secp256k1)`);
      if (answer.KeyUsage !== 'SIGN_VERIFY') throw new SignerError(description, `the key's usage is ${answer.KeyUsage}, not SIGN_VERIFY`);
      if (!answer.PublicKey) throw new SignerError(description, 'KMS GetPublicKey returned no public key');
      let publicKey: Uint8Array;
      try {
        publicKey = publicKeyFromSpki(answer.PublicKey);
      } catch (error) {
        throw signerErrorOf(description, error, 'KMS GetPublicKey');
      }
      return new AwsKmsSigner(client, options.keyId, computeAddress(hexlify(publicKey)), description);
    } catch (error) {
      client.destroy();
      throw signerErrorOf(description, error);
    }
  }

  async signDigest(digest: Uint8Array): Promise<Signature> {
    if (this.closed) throw new SignerError(this.description, 'closed');
    if (digest.length !== 32) throw new SignerError(this.description, `a digest is 32 bytes, not ${digest.length}`);
    const answer = await this.#client
      .send(new SignCommand({ KeyId: this.#keyId, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' }))
      .catch((error: unknown) => {
        throw new SignerError(this.description, `KMS Sign failed: ${awsReason(error)}`, { cause: error });
      });
    if (!answer.Signature) throw new SignerError(this.description, 'KMS Sign returned no signature');
    try {
      const { r, s } = rsFromDerSignature(answer.Signature);
      return recoverableSignature(digest, r, s, this.address);
    } catch (error) {
      throw signerErrorOf(this.description, error, 'KMS Sign');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.#client.destroy();
  }
}
