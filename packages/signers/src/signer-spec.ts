// The configuration syntax of signers: one spec per key, `kms:<key ARN>`, `pkcs11:<RFC 7512 URI>` or
// `local:<private key>`, and lists of them (`RELAYER_SIGNERS=kms:arn:…,pkcs11:token=…;object=…?…`)
// separated by commas or whitespace. Errors are one line naming the entry, with no secret in it.
import { isHexString } from 'ethers';
import { AwsKmsSigner, regionOfKmsArn } from './aws-kms-signer';
import { LocalKeySigner } from './local-key-signer';
import { Pkcs11Signer } from './pkcs11/pkcs11-signer';
import { Pkcs11UriError, parsePkcs11Uri, type Pkcs11Uri } from './pkcs11/pkcs11-uri';
import type { Signer } from './signer';
import { SignerError, SignerSpecError, signerErrorOf } from './signer-error';

type SignerSpec =
  | { backend: 'local'; privateKey: string }
  | { backend: 'aws-kms'; keyId: string }
  | { backend: 'pkcs11'; uri: Pkcs11Uri };

const KMS_KEY = [
  /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/,
  /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:alias\/[A-Za-z0-9/_-]+$/,
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  /^mrk-[0-9a-f]{32}$/i,
  /^alias\/[A-Za-z0-9/_-]+$/,
];

const SCHEMES = 'kms:<key ARN>, pkcs11:<URI> or local:<private key>';
const COMMA_RULE = 'entries are separated by commas or whitespace, so a comma inside a PKCS#11 URI must be written %2C';

/** An entry as an error may show it: no private key, no PIN, and short. */
export function redactSpec(entry: string): string {
  if (/^local:/i.test(entry)) return 'local:<private key>';
  const shown = entry
    .replace(/(pin-value=)[^&]*/gi, '$1<PIN>')
    .replace(/(0x)?[0-9a-f]{64}/gi, '<64 hex digits>');
  return shown.length > 120 ? `${shown.slice(0, 117)}...` : shown;
}

/** The spec's meaning, or a SignerSpecError saying what is wrong with it (without repeating it). */
function readSpec(text: string): SignerSpec {
  const scheme = /^([a-z0-9-]+):/i.exec(text)?.[1]?.toLowerCase();
  if (scheme === 'local') {
    const privateKey = text.slice('local:'.length);
    if (!isHexString(privateKey, 32)) throw new SignerSpecError('a local signer is local:0x followed by the 64 hex digits of its private key');
    return { backend: 'local', privateKey };
  }
  if (scheme === 'kms') {
    const keyId = text.slice('kms:'.length);
    if (!KMS_KEY.some((form) => form.test(keyId))) throw new SignerSpecError('a KMS signer is kms: and a key ARN, an alias ARN, a key id or alias/<name>');
    return { backend: 'aws-kms', keyId };
  }
  if (scheme === 'pkcs11') {
    try {
      return { backend: 'pkcs11', uri: parsePkcs11Uri(text) };
    } catch (error) {
      if (!(error instanceof Pkcs11UriError)) throw error;
      throw new SignerSpecError(error.message);
    }
  }
  if (isHexString(text, 32) || /^[0-9a-f]{64}$/i.test(text)) {
    throw new SignerSpecError('a bare private key: write it local:0x<64 hex digits> (or keep keys in a KMS or an HSM)');
  }
  throw new SignerSpecError(`not a signer: use ${SCHEMES}`);
}

/** One signer spec; throws a SignerSpecError naming it (redacted) and what is wrong. */
export function parseSignerSpec(spec: string): SignerSpec {
  const text = spec.trim();
  try {
    return readSpec(text);
  } catch (error) {
    if (!(error instanceof SignerSpecError)) throw error;
    throw new SignerSpecError(`${redactSpec(text)}: ${error.message}`);
  }
}

const startsLikeSpec = (entry: string) => /^(kms|pkcs11|local):/i.test(entry);

/**
 * A list of signer specs separated by commas or whitespace. Each bad entry is named by its place and
 * shown without secrets; an entry that looks cut at a comma reminds that a comma splits a PKCS#11 URI.
 */
export function parseSignerList(value: string, name = 'the signer list'): SignerSpec[] {
  const entries = value.split(/[\s,]+/).filter(Boolean);
  if (entries.length === 0) throw new SignerSpecError(`${name} names no signer (${SCHEMES}, separated by commas or whitespace)`);
  return entries.map((entry, index) => {
    try {
      return readSpec(entry);
    } catch (error) {
      if (!(error instanceof SignerSpecError)) throw error;
      const place = `${name}, entry ${index + 1} of ${entries.length}`;
      // a URI cut at a comma: this entry is not a spec at all, or it is a URI whose rest is the next entry
      const cut = !startsLikeSpec(entry) || (/^pkcs11:/i.test(entry) && index + 1 < entries.length && !startsLikeSpec(entries[index + 1]));
      const hint = cut ? ` (${COMMA_RULE})` : '';
      throw new SignerSpecError(`${place} (${redactSpec(entry)}): ${error.message}${hint}`);
    }
  });
}

/** The environment a signer reads: AWS_KMS_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID, … */
export type SignerEnvironment = Readonly<Record<string, string | undefined>>;

/**
 * Opens the signer a spec names. KMS: region from the ARN, else AWS_REGION; endpoint AWS_KMS_ENDPOINT when
 * set (a VPC endpoint, a test server); credentials AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY(/AWS_SESSION_TOKEN)
 * when set, else the AWS SDK's chain (profile, container or instance role). Failures are SignerErrors.
 */
export async function createSigner(spec: string | SignerSpec, env: SignerEnvironment = process.env): Promise<Signer> {
  let parsed: SignerSpec;
  try {
    parsed = typeof spec === 'string' ? readSpec(spec.trim()) : spec;
  } catch (error) {
    throw new SignerError(typeof spec === 'string' ? redactSpec(spec.trim()) : 'signer', (error as Error).message);
  }
  try {
    return await open(parsed, env);
  } catch (error) {
    throw signerErrorOf(describeSpec(parsed), error);
  }
}

/** The description a signer of this spec will have, for errors before it exists. */
function describeSpec(spec: SignerSpec): string {
  if (spec.backend === 'aws-kms') return `kms:${spec.keyId}`;
  if (spec.backend === 'pkcs11') return spec.uri.description;
  return 'local:<private key>';
}

async function open(spec: SignerSpec, env: SignerEnvironment): Promise<Signer> {
  switch (spec.backend) {
    case 'local':
      return new LocalKeySigner(spec.privateKey);
    case 'pkcs11':
      return Pkcs11Signer.open(spec.uri);
    case 'aws-kms': {
      const description = describeSpec(spec);
      const region = regionOfKmsArn(spec.keyId) ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined);
      if (!region) throw new SignerError(description, 'no AWS region: name the key by its ARN, or set AWS_REGION');
      const endpoint = env.AWS_KMS_ENDPOINT || undefined;
      if (endpoint !== undefined && !/^https?:\/\/[^\s/]+/.test(endpoint)) throw new SignerError(description, 'AWS_KMS_ENDPOINT must be an http(s) URL');
      const credentials =
        env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
          ? { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, sessionToken: env.AWS_SESSION_TOKEN || undefined }
          : undefined;
      return AwsKmsSigner.create({ keyId: spec.keyId, region, endpoint, credentials });
    }
  }
}

/**
 * Opens every signer of a list at once. When one cannot be opened, or two entries are one key (one address
 * would get two nonce sequences), the opened ones are closed and the first failure, in list order, is thrown.
 */
export async function createSigners(specs: readonly (string | SignerSpec)[], env: SignerEnvironment = process.env): Promise<Signer[]> {
  const results = await Promise.allSettled(specs.map((spec) => createSigner(spec, env)));
  const opened = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failure = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  let problem: unknown = failure?.reason;
  if (!problem) {
    const seen = new Map<string, Signer>();
    for (const signer of opened) {
      const earlier = seen.get(signer.address);
      if (earlier) {
        problem = new SignerError(signer.description, `is the same key as ${earlier.description} (${signer.address}): list each key once`);
        break;
      }
      seen.set(signer.address, signer);
    }
  }
  if (problem) {
    await Promise.all(opened.map((signer) => signer.close().catch(() => undefined)));
    throw signerErrorOf('signer', problem);
  }
  return opened;
}
