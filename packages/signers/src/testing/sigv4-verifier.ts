// Checks an AWS Signature Version 4 request as AWS does, so that the KMS protocol server refuses what the
// real service would: no signature, an unknown access key, a signature made with another secret, region or
// service, or one older than 15 minutes. Written from AWS's "Create a signed AWS API request" steps.
import { createHash, createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export interface Sigv4Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

export interface Sigv4Request {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** An AWS authentication error: its `__type` and message as AWS's JSON protocol returns them. */
export interface Sigv4Refusal {
  type: string;
  message: string;
}

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;
const MAX_SKEW_MS = 15 * 60_000;

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return (Array.isArray(value) ? value.join(',') : value).trim().replace(/\s+/g, ' ');
}

function amzDateMs(amzDate: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  return m ? Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) : NaN;
}

/** Undefined when `request` is signed by one of `credentials` for `region` and `service`; else why not. */
export function verifySigv4(request: Sigv4Request, credentials: readonly Sigv4Credentials[], region: string, service: string, now = Date.now()): Sigv4Refusal | undefined {
  const authorization = headerValue(request.headers, 'authorization');
  if (!authorization) return { type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const parsed = AUTHORIZATION.exec(authorization);
  if (!parsed) return { type: 'IncompleteSignatureException', message: `Authorization header requires AWS4-HMAC-SHA256 Credential, SignedHeaders and Signature: ${authorization.split(' ')[0]}` };
  const [, accessKeyId, date, scopeRegion, scopeService, signedHeaders, signature] = parsed;
  const secret = credentials.find((c) => c.accessKeyId === accessKeyId)?.secretAccessKey;
  if (!secret) return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (scopeRegion !== region || scopeService !== service) {
    return { type: 'InvalidSignatureException', message: `Credential should be scoped to a valid region and service: ${scopeRegion}/${scopeService}, expected ${region}/${service}.` };
  }
  const amzDate = headerValue(request.headers, 'x-amz-date') ?? '';
  const signedAt = amzDateMs(amzDate);
  if (!signedHeaders.split(';').includes('host') || Number.isNaN(signedAt) || !amzDate.startsWith(date)) {
    return { type: 'IncompleteSignatureException', message: 'The request must sign host and carry an X-Amz-Date of the credential scope.' };
  }
  if (Math.abs(now - signedAt) > MAX_SKEW_MS) return { type: 'InvalidSignatureException', message: 'Signature expired: the request was signed more than 15 minutes from now.' };

  const names = signedHeaders.split(';');
  const canonicalHeaders = names.map((name) => `${name}:${headerValue(request.headers, name) ?? ''}\n`).join('');
  const [path, query = ''] = request.path.split('?');
  const canonicalQuery = query
    .split('&')
    .filter(Boolean)
    .sort()
    .join('&');
  const canonicalRequest = [request.method, path, canonicalQuery, canonicalHeaders, signedHeaders, sha256(request.body)].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  const expected = createHmac('sha256', signingKey).update(stringToSign).digest('hex');
  if (expected !== signature) {
    return {
      type: 'InvalidSignatureException',
      message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
    };
  }
  return undefined;
}
